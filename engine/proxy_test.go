package engine_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// forwardProxy is an HTTP proxy that knows one host the machine cannot
// resolve (upstream.invalid) and sends its requests to a sim: an endpoint
// that only the proxy reaches, as behind a corporate proxy.
type forwardProxy struct {
	srv    *httptest.Server
	served atomic.Int64
	auth   atomic.Value // the last Proxy-Authorization
}

const proxiedHost = "upstream.invalid"

func newForwardProxy(t *testing.T, target *sim.Upstream) *forwardProxy {
	p := &forwardProxy{}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.auth.Store(r.Header.Get("Proxy-Authorization"))
		if r.URL.Host != proxiedHost {
			http.Error(w, "unknown host", http.StatusBadGateway)
			return
		}
		p.served.Add(1)
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, target.URL()+r.URL.Path, r.Body)
		out.Header = r.Header.Clone()
		out.Header.Del("Proxy-Authorization")
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func proxiedSim(t *testing.T) *sim.Upstream {
	u := sim.New(sim.Config{Name: "behind", Latency: fixed(0)})
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return u
}

// An endpoint only a proxy reaches is served through the proxy its config
// names; the proxy's credentials go to the proxy and are never shown.
func TestProxy_EndpointIsReachedThroughItsProxy(t *testing.T) {
	p := newForwardProxy(t, proxiedSim(t))
	proxyURL := strings.Replace(p.srv.URL, "http://", "http://ops:hunter2secret@", 1)
	h := startHarness(t, nil, func(c *engine.Config) {
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "behind", URL: "http://" + proxiedHost + "/v3/KEY0123456789", Proxy: proxyURL})
	})
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	if p.served.Load() == 0 {
		t.Fatal("the proxy carried no request")
	}
	if got, want := p.auth.Load(), "Basic "+base64.StdEncoding.EncodeToString([]byte("ops:hunter2secret")); got != want {
		t.Fatalf("Proxy-Authorization %q, want the proxy URL's user info", got)
	}
	code, status := h.adminDo("GET", "/v1/status", "")
	if code != 200 || strings.Contains(string(status), "hunter2secret") || strings.Contains(string(status), "KEY0123456789") {
		t.Fatalf("status HTTP %d shows a secret: %s", code, status)
	}
	if ep := h.endpoint("behind"); ep.Proxy != strings.Replace(p.srv.URL, "http://", "http://REDACTED@", 1) {
		t.Fatalf("status proxy %q", ep.Proxy)
	}
}

// proxy = "env" takes the environment's HTTP(S)_PROXY; an endpoint left
// direct while one is set is named in an event (behind a proxy that is the
// only way out it could not be reached, where curl reaches it).
func TestProxy_EnvTakesTheEnvironmentsProxyAndADirectOneIsNamed(t *testing.T) {
	p := newForwardProxy(t, proxiedSim(t))
	t.Setenv("HTTP_PROXY", p.srv.URL)
	h := startHarness(t, nil, func(c *engine.Config) {
		c.Endpoints = append(c.Endpoints,
			engine.EndpointConfig{Name: "viaenv", URL: "http://" + proxiedHost + "/", Proxy: engine.ProxyFromEnv},
			engine.EndpointConfig{Name: "direct", URL: "http://" + proxiedHost + "/"})
		c.Breaker.MaxOpenShare = 1
	})
	for i := range 5 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if p.served.Load() == 0 {
		t.Fatal("the environment's proxy carried no request")
	}
	found := false
	for _, ev := range h.events() {
		found = found || ev.Type == engine.EventConfig && strings.HasPrefix(ev.Message, "HTTP_PROXY is set") && strings.Contains(ev.Message, `proxy = "env"`)
	}
	if !found {
		t.Fatalf("no event names the unused HTTP_PROXY: %+v", h.events())
	}
}
