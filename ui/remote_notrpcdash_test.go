package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// console --attach at another program (a JSON-RPC node's port, a web
// server) says it is not rpcdash on the STALE line, as rpcdash status
// does; it said only "HTTP 405 from <url>". rpcdash's own 503 past
// server.max_conns (JSON) is not called another program.
func TestRemote_AnotherProgramAtAttachIsSaidNotRpcdash(t *testing.T) {
	for _, c := range []struct {
		name string
		code int
		body string
		not  bool
	}{
		{"JSON-RPC node", http.StatusMethodNotAllowed, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"use POST"}}`, true},
		{"web page", http.StatusNotFound, "<!DOCTYPE html><html><body>Not Found</body></html>", true},
		{"rpcdash past max_conns", http.StatusServiceUnavailable, `{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"server.max_conns reached"}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.code)
				w.Write([]byte(c.body))
			}))
			t.Cleanup(srv.Close)
			r, err := NewRemote(srv.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.Close)
			m := New(Options{Backend: r, Location: time.UTC, Source: Source{Attached: srv.URL}})
			mm, _ := m.Update(sizeMsg(120, 36))
			m = mm.(Model)
			m = settle(t, m, m.refresh())
			v := m.View()
			if said := strings.Contains(v, "not an rpcdash answer"); said != c.not || !strings.Contains(v, "HTTP ") {
				t.Fatalf("HTTP %d: says not rpcdash %v, want %v:\n%s", c.code, said, c.not, v)
			}
			if strings.Contains(v, "use POST") || strings.Contains(v, "DOCTYPE") {
				t.Fatalf("the other program's answer is relayed:\n%s", v)
			}
		})
	}
}
