package ui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An attached console draws what the admin API at --attach sends, and that
// may not be rpcdash: escape sequences in an endpoint name, an error, a
// method or an event reach the model as '?', never the terminal; numbers
// past 2^53 are kept as sent.
func TestRemote_AnswersTextIsMadePrintable(t *testing.T) {
	const esc = `\u001b[2J\u001b]0;pwned\u0007`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/status":
			io.WriteString(w, `{"endpoints":[{"name":"a`+esc+`","last_error":"`+esc+`boom","errors":[{"time":"2026-12-03T19:42:17Z","text":"`+esc+`"}]}],"warnings":["w`+esc+`"],"methods":{"m`+esc+`":{"class":"read"}}}`)
		case "/v1/events":
			io.WriteString(w, `{"events":[{"seq":18446744073709551615,"type":"drain","endpoint":"a`+esc+`","message":"`+esc+`x","actor":"admin"}]}`)
		}
	}))
	defer srv.Close()
	remote, err := NewRemote(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	s, err := remote.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ep := range s.Endpoints {
		texts = append(texts, ep.Name, ep.LastError)
		for _, e := range ep.Errors {
			texts = append(texts, e.Text)
		}
	}
	for m := range s.Methods {
		texts = append(texts, m)
	}
	for _, w := range s.Warnings {
		texts = append(texts, w.Text)
	}
	evs, err := remote.Events(context.Background(), 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v, %v", evs, err)
	}
	if evs[0].Seq != 18446744073709551615 {
		t.Errorf("event seq %d, want 18446744073709551615 as sent", evs[0].Seq)
	}
	texts = append(texts, evs[0].Endpoint, evs[0].Message)
	if len(texts) < 7 {
		t.Fatalf("only %d texts decoded: %q", len(texts), texts)
	}
	for _, x := range texts {
		if strings.ContainsAny(x, "\x1b\x07") {
			t.Errorf("%q reached the console with its escape sequences", x)
		}
	}
}
