package engine_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
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

func gzipped(t *testing.T, s string) string { return encoded(t, "gzip", s) }

// encoded is s compressed in coding, gzip or deflate (zlib, as HTTP's
// deflate is).
func encoded(t *testing.T, coding, s string) string {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser = gzip.NewWriter(&b)
	if coding == "deflate" {
		w = zlib.NewWriter(&b)
	}
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A compressed request body is decoded and served as a plain one; one
// rpcdash cannot decode gets an error naming its Content-Encoding, and
// server.max_body_bytes bounds the decoded body too: a small gzip bomb is
// refused as a plain body of its decoded size would be. Before, every
// compressed body got -32700 "parse error: body is not valid JSON", which
// did not say why.
func TestServer_CompressedRequestBodiesAreDecodedWithinTheLimit(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Server.MaxBatch = 3
		c.Server.MaxBodyBytes = 2048
	}, sim.Config{})
	batch := `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_chainId"}]`
	tooMany := `[` + strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},`, 3) + `{"jsonrpc":"2.0","id":4,"method":"eth_chainId"}]`
	bomb := gzipped(t, `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["`+strings.Repeat("a", 1<<20)+`"]}`)
	good := gzipped(t, chainID)
	cases := []struct {
		name, coding, body string
		status             int
		want               []string // substrings of the answer
	}{
		{"gzip", "gzip", good, 200, []string{`{"jsonrpc":"2.0","id":1,"result":"0x7a69"}`}},
		{"x-gzip, any case", "X-GZIP", good, 200, []string{`"result":"0x7a69"`}},
		{"deflate", "deflate", encoded(t, "deflate", chainID), 200, []string{`"result":"0x7a69"`}},
		{"identity", "identity", chainID, 200, []string{`"result":"0x7a69"`}},
		{"gzip batch", "gzip", gzipped(t, batch), 200, []string{`[{"jsonrpc":"2.0","id":1,"result":"0x7a69"},{"jsonrpc":"2.0","id":2,"result":"0x7a69"}]`}},
		{"gzip batch over server.max_batch", "gzip", gzipped(t, tooMany), 200, []string{`"code":-32005`}},
		{"unsupported coding", "br", chainID, 415, []string{`"code":-32600`, `Content-Encoding \"br\" is not supported`}},
		{"two codings", "gzip, gzip", gzipped(t, good), 415, []string{`"code":-32600`, `\"gzip, gzip\" is not supported`}},
		{"plain JSON called gzip", "gzip", chainID, 400, []string{`"code":-32700`, `not valid gzip (its Content-Encoding)`}},
		{"gzip cut short", "gzip", good[:len(good)-6], 400, []string{`"code":-32700`, `not valid gzip`}},
		{"gzip bomb", "gzip", bomb, 413, []string{`"code":-32600`, `server.max_body_bytes (2048 bytes) once decoded from its Content-Encoding gzip`}},
	}
	if len(bomb) > 2048 {
		t.Fatalf("the bomb is %d bytes compressed: it must be under the limit to test the decoded bound", len(bomb))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := h.upstreamCount("eth_chainId")
			status, hdr, body := h.sendFor("POST", h.rpc, c.body, map[string]string{"Content-Type": "application/json", "Content-Encoding": c.coding})
			if status != c.status {
				t.Fatalf("HTTP %d %s; want %d", status, body, c.status)
			}
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Fatalf("answer %s; want it to hold %s", body, w)
				}
			}
			if c.status == 415 && hdr.Get("Accept-Encoding") != "gzip, deflate" {
				t.Errorf("a 415's Accept-Encoding is %q; want the codings taken, gzip, deflate", hdr.Get("Accept-Encoding"))
			}
			if sent := h.upstreamCount("eth_chainId") - before; c.status != 200 && sent != 0 {
				t.Errorf("%d calls went upstream for a refused body", sent)
			}
		})
	}
}

// What compressed bodies hold decoded at once is bounded: a few KiB sent
// cannot make rpcdash hold server.max_body_bytes for each of
// server.max_inflight requests (20 GiB by default). Past 64 MiB decoded
// and held (or 4 × server.max_body_bytes), a compressed body gets HTTP 503
// with -32005 naming the bound, and what a request took is given back
// once it is served. The upstream holds every read until the test lets
// the round go, so a round's bodies are held together.
func TestServer_CompressedBodiesHeldAtOnceAreBounded(t *testing.T) {
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
		c.Endpoints = []engine.EndpointConfig{{Name: "held", URL: up.URL}}
		c.Probes.Enabled = false
	})
	// 1,040,000 bytes decoded from about 1 KiB sent: 64 fit in 64 MiB.
	const perBody, fit = 1_040_000, (64 << 20) / 1_040_000
	call := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest","`
	body := gzipped(t, call+strings.Repeat("a", perBody-len(call)-3)+`"]}`)
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
				req.Header.Set("Content-Encoding", "gzip")
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
				strings.Contains(a.body, "compressed request bodies being served already hold rpcdash's bound for them, 64 MiB decoded"):
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
		t.Fatalf("%d bodies of %d bytes sent at once: %d held together upstream, %d answered, %d refused, others %v; want at most %d held (64 MiB), the rest refused with 503 -32005 naming the bound",
			fit+16, perBody, held, ok, refused, other, fit)
	}
	// What the first round took is given back: a second round of as many
	// as fit is held whole.
	held, answers = round(fit)
	if ok, refused, other := count(answers); held != fit || ok != fit {
		t.Fatalf("second round of %d: %d held together, %d answered, %d refused, others %v; want every one held and answered", fit, held, ok, refused, other)
	}
}
