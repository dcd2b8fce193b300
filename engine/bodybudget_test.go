package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The request bodies held at once are bounded by
// server.max_held_body_bytes, plain or compressed (counted decoded): each
// body within server.max_body_bytes was no bound for server.max_inflight
// of them (20 GiB by default), and a few KiB of gzip could hold a whole
// max_body_bytes. Past the bound a request gets HTTP 503 with -32005
// naming the key, and what a request took is given back once it is
// served. The upstream holds every read until the test lets the round go,
// so a round's bodies are held together.
func TestServer_BodiesHeldAtOnceAreBounded(t *testing.T) {
	t.Run("plain", func(t *testing.T) { bodiesHeldAtOnceAreBounded(t, "") })
	t.Run("gzip", func(t *testing.T) { bodiesHeldAtOnceAreBounded(t, "gzip") })
}

func bodiesHeldAtOnceAreBounded(t *testing.T, coding string) {
	var received atomic.Int64
	var gate atomic.Pointer[chan struct{}]
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		g := gate.Load()
		received.Add(1)
		<-*g
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x0"}`)
	}))
	t.Cleanup(up.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Server.MaxBodyBytes = 1 << 20
		c.Server.MaxHeldBodyBytes = 64 << 20
		c.Endpoints = []engine.EndpointConfig{{Name: "held", URL: up.URL}}
		c.Probes.Enabled = false
	})
	// 1,040,000 bytes held each (from about 1 KiB sent, gzipped): 64 fit
	// in 64 MiB.
	const perBody, fit = 1_040_000, (64 << 20) / 1_040_000
	call := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest","`
	body := call + strings.Repeat("a", perBody-len(call)-3) + `"]}`
	if coding != "" {
		body = encoded(t, coding, body)
	}
	type answer struct {
		status int
		body   string
	}
	// round sends n bodies at once and returns how many reached the
	// upstream together, and every answer once they are let go.
	round := func(n int) (held int, answers []answer) {
		t.Helper()
		g := make(chan struct{})
		let := sync.OnceFunc(func() { close(g) })
		t.Cleanup(let)
		gate.Store(&g)
		received.Store(0)
		out := make(chan answer, n)
		for range n {
			go func() {
				req, _ := http.NewRequest("POST", h.rpc, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Content-Encoding", coding)
				resp, err := h.client.Do(req)
				if err != nil {
					out <- answer{0, err.Error()}
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				out <- answer{resp.StatusCode, string(b)}
			}()
		}
		deadline := time.After(30 * time.Second)
		// Refusals come at once; the rest wait upstream until let go.
		for int(received.Load())+len(answers) < n {
			select {
			case a := <-out:
				answers = append(answers, a)
			case <-time.After(5 * time.Millisecond):
			case <-deadline:
				let()
				t.Fatalf("after 30 s: %d bodies upstream, %d answered, of %d", received.Load(), len(answers), n)
			}
		}
		held = int(received.Load())
		let()
		for len(answers) < n {
			answers = append(answers, <-out)
		}
		return held, answers
	}
	count := func(answers []answer) (ok, refused int, other []answer) {
		for _, a := range answers {
			switch {
			case a.status == 200 && strings.Contains(a.body, `"result":"0x0"`):
				ok++
			case a.status == 503 && strings.Contains(a.body, `"code":-32005`) &&
				strings.Contains(a.body, "already hold server.max_held_body_bytes (67108864 bytes"):
				refused++
			default:
				other = append(other, a)
			}
		}
		return ok, refused, other
	}

	held, answers := round(fit + 16)
	ok, refused, other := count(answers)
	if held > fit || refused < 16 || ok != held || len(other) > 0 {
		t.Fatalf("%d bodies of %d bytes sent at once: %d held together upstream, %d answered, %d refused, others %v; want at most %d held (64 MiB), the rest refused with 503 -32005 naming server.max_held_body_bytes",
			fit+16, perBody, held, ok, refused, other, fit)
	}
	// What the first round took is given back: a second round of as many
	// as fit is held whole.
	held, answers = round(fit)
	if ok, refused, other := count(answers); held != fit || ok != fit {
		t.Fatalf("second round of %d: %d held together, %d answered, %d refused, others %v; want every one held and answered", fit, held, ok, refused, other)
	}
}

// A body within server.max_body_bytes is always taken when nothing else
// is held, even with server.max_held_body_bytes set below it.
func TestServer_OneBodyFitsWhateverTheHeldBound(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Server.MaxBodyBytes = 2 << 20
		c.Server.MaxHeldBodyBytes = 1 << 20
	}, sim.Config{})
	r := h.post(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["` + strings.Repeat("a", 3<<19) + `"]}`)
	if r.status != 200 || strings.Contains(string(r.body), "max_held_body_bytes") {
		t.Fatalf("a 1.5 MiB body, max_body_bytes 2 MiB, max_held_body_bytes 1 MiB: HTTP %d %.200s; want it taken", r.status, r.body)
	}
}
