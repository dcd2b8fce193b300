package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// `rpcdash status` prints what an admin API answers, and --admin may name
// anything: a status whose texts carry escape sequences (an endpoint
// name, an error, a warning), or an error answer of any length, reaches
// the terminal without them and bounded, as upstream text does.
func TestStatus_RemoteTextReachesTheTerminalSanitised(t *testing.T) {
	const esc = `\u001b[2J\u001b]0;pwned\u0007`
	status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"endpoints":[{"name":"a`+esc+`","provider":"p`+esc+`","last_error":"`+esc+`boom","routable":true}],"warnings":["w`+esc+`"],"methods":{"m`+esc+`":{"class":"read"}}}`)
	}))
	defer status.Close()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"`+esc+strings.Repeat("E", 5000)+`"}`)
	}))
	defer refusing.Close()
	raw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "\x1b[2J\x1b]0;pwned\x07\xff"+strings.Repeat("R", 5000))
	}))
	defer raw.Close()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"table", []string{"--admin", status.URL}},
		{"csv", []string{"--admin", status.URL, "--format", "csv"}},
		{"error answer", []string{"--admin", refusing.URL}},
		{"raw error answer", []string{"--admin", raw.URL}},
	} {
		out, errOut, _ := runStatus(t, c.args...)
		for _, s := range []string{out, errOut} {
			if strings.ContainsAny(s, "\x1b\x07") || strings.Contains(s, "\xff") || len(s) > 4096 {
				t.Errorf("%s: %d bytes printed with escapes or unbounded: %.300q", c.name, len(s), s)
			}
		}
	}
}
