package engine_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"

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
