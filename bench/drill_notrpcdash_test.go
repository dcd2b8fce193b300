package bench_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/bench"
)

// Another program at the drill's --admin (a web server's error page, a
// JSON-RPC node's error object) is named as not rpcdash, with its URL,
// as status --admin names it: the drill printed "admin API POST
// /v1/drill: HTTP 501: <!DOCTYPE HTML>?<html lang=…", naming neither.
func TestDrill_AnotherProgramAtAdminIsNamedAsNotRpcdash(t *testing.T) {
	for _, c := range []struct{ name, body string }{
		{"web page", "<!DOCTYPE HTML>\n<html><body><h1>Error response</h1></body></html>"},
		{"JSON-RPC node", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"use POST"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusMethodNotAllowed)
				_, _ = w.Write([]byte(c.body))
			}))
			defer other.Close()
			rep, err := bench.Drill(context.Background(), bench.DrillConfig{Admin: bench.Admin{URL: other.URL}, Mode: "error", NoLoad: true}, nil)
			if err == nil {
				t.Fatalf("report %+v: want an error", rep)
			}
			msg := err.Error()
			if want := "no rpcdash admin API at " + other.URL; !strings.Contains(msg, want) || !strings.Contains(msg, "not an rpcdash answer") {
				t.Errorf("%q lacks %q and \"not an rpcdash answer\"", msg, want)
			}
			if strings.Contains(msg, "<!DOCTYPE") || strings.Contains(msg, "use POST") {
				t.Errorf("%q relays the other program's answer", msg)
			}
		})
	}
}
