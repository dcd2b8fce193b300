package engine_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
)

// The admin client against an admin-shaped server on loopback: what it
// sends, and what each kind of failure becomes.
func TestAdminClient_HeadersAnswersAndErrors(t *testing.T) {
	var got http.Header
	var gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, `{"n": 3}`)
		case "/refused":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "delay: not a duration"}`)
		case "/plain":
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "  upstream said no  ")
		case "/garbage":
			io.WriteString(w, "<html>")
		case "/big":
			w.Write(make([]byte, 1<<20))
		}
	}))
	defer srv.Close()
	c := engine.AdminClient{Base: srv.URL + "/", Token: "T0k", Actor: engine.ActorConsole, HTTP: srv.Client()}
	ctx := context.Background()

	var out struct{ N int }
	if err := c.Do(ctx, http.MethodPost, "/ok", map[string]int{"a": 1}, &out); err != nil || out.N != 3 {
		t.Fatalf("POST /ok: %v, %+v", err, out)
	}
	if got.Get("Content-Type") != "application/json" || got.Get("Authorization") != "Bearer T0k" ||
		got.Get("X-Rpcdash-Actor") != "console" || gotBody != `{"a":1}` {
		t.Errorf("POST sent headers %v, body %q", got, gotBody)
	}
	if err := c.Do(ctx, http.MethodGet, "/ok", nil, nil); err != nil || got.Get("Content-Type") != "" {
		t.Errorf("GET: %v, Content-Type %q", err, got.Get("Content-Type"))
	}
	var raw []byte
	if err := c.Do(ctx, http.MethodGet, "/ok", nil, &raw); err != nil || string(raw) != `{"n": 3}` {
		t.Errorf("raw answer %q, %v", raw, err)
	}
	// An answer over MaxBytes: TestAdminClient_AnswerOverMaxBytesIsRefusedNotCut.

	var ae *engine.AdminError
	if err := c.Do(ctx, http.MethodPut, "/refused", nil, nil); !errors.As(err, &ae) || ae.Code != 400 || !ae.FromAPI ||
		err.Error() != "HTTP 400: delay: not a duration" {
		t.Errorf("refused: %v (%#v)", err, ae)
	}
	if err := c.Do(ctx, http.MethodGet, "/plain", nil, nil); !errors.As(err, &ae) || ae.Code != 502 || ae.FromAPI || ae.Text != "upstream said no" {
		t.Errorf("plain: %v (%#v)", err, ae)
	}
	if err := c.Do(ctx, http.MethodGet, "/garbage", nil, &out); !errors.As(err, &ae) || !ae.Decoding || ae.Code != 0 {
		t.Errorf("garbage: %v (%#v)", err, ae)
	}
	down := engine.AdminClient{Base: "http://" + testutil.FreeAddrs(t, 1)[0]}
	if err := down.Do(ctx, http.MethodGet, "/v1/status", nil, nil); !errors.As(err, &ae) || ae.Code != 0 || ae.Reading || ae.Decoding || ae.Err == nil {
		t.Errorf("nothing listening: %v (%#v)", err, ae)
	}
}
