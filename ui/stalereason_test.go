package ui

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Attached to a fleet host whose admin URL is long, the STALE line gave
// the URL the header already names and cut the reason: "http://rpcdash-
// eu-west-1-prod-07.internal.example:8546 unreachable: conn…". The header
// says the reason whole at 80 and 120 columns. The host is only a name:
// every connection goes to a loopback listener.
func TestView_StaleLineSaysWhyForALongAttachURL(t *testing.T) {
	const base = "http://rpcdash-eu-west-1-prod-07.internal.example:8546"
	notRpcdash := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("<html>Not Found</html>"))
	}))
	t.Cleanup(notRpcdash.Close)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	for _, c := range []struct {
		name, to, want string
	}{
		{"refused", refused, "unreachable: connection refused"},
		{"another program", strings.TrimPrefix(notRpcdash.URL, "http://"), "HTTP 404, not an rpcdash answer, from /v1/status"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewRemote(base, "")
			if err != nil {
				t.Fatal(err)
			}
			var d net.Dialer
			r.client = &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, c.to)
			}}}
			t.Cleanup(r.Close)
			for _, size := range [][2]int{{80, 24}, {120, 36}} {
				m := New(Options{Backend: r, Location: time.UTC, Source: Source{Attached: r.URL()}})
				mm, _ := m.Update(sizeMsg(size[0], size[1]))
				m = mm.(Model)
				m = settle(t, m, m.refresh())
				head := ansi.Strip(strings.Join(m.headerLines(), "\n"))
				if !strings.Contains(head, c.want) || !strings.Contains(head, "STALE") || !strings.Contains(head, "attached "+base) {
					t.Errorf("%dx%d: header\n%s\nwant %q whole beside STALE", size[0], size[1], head, c.want)
				}
			}
		})
	}
}

// Before the first Snapshot nothing is known of the traffic: the methods
// panel's (all methods) row read REQ/S 0 beside dashes while an attached
// console waited on an instance that did not answer.
func TestView_NoRequestRateBeforeTheFirstSnapshot(t *testing.T) {
	m := New(Options{Location: time.UTC, Source: Source{Attached: "http://127.0.0.1:8546"}})
	mm, _ := m.Update(sizeMsg(120, 36))
	m = mm.(Model)
	for _, l := range strings.Split(ansi.Strip(m.View()), "\n") {
		if strings.Contains(l, "(all methods)") {
			if f := strings.Fields(strings.Trim(l, "│▸ ")); len(f) < 3 || f[2] != dash {
				t.Fatalf("(all methods) row before any Snapshot: %q, want REQ/S %s", l, dash)
			}
			return
		}
	}
	t.Fatalf("no (all methods) row:\n%s", ansi.Strip(m.View()))
}
