package engine

import (
	"bytes"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request body's buffer starts at the size its Content-Length announces
// when that is under 4 KiB: a ~100-byte call took a 4 KiB buffer, a sixth
// of what a request through the engine allocated
// (BenchmarkProxy_Engine). An unknown length still starts at 4 KiB, and a
// larger one still grows as its bytes arrive.
func TestReadBody_BufferIsTheAnnouncedSizeUpTo4KiB(t *testing.T) {
	cfg := Default()
	cfg.Endpoints = []EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	e, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`
	big := `[` + strings.Repeat(call+",", 99) + call + `]`
	for _, c := range []struct {
		name    string
		body    string
		known   bool
		wantCap int
	}{
		{"one call, length announced", call, true, len(call) + 1},
		{"one call, length unknown", call, false, 4 << 10},
		{"100 calls, length announced", big, true, len(big) + 1},
	} {
		r := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(c.body)))
		r.ContentLength = -1
		if c.known {
			r.ContentLength = int64(len(c.body))
		}
		got, giveBack, err := e.readBody(httptest.NewRecorder(), r)
		giveBack()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(got, []byte(c.body)) {
			t.Errorf("%s: read %d bytes, want the %d sent", c.name, len(got), len(c.body))
		}
		if cap(got) > c.wantCap {
			t.Errorf("%s: a buffer of %d bytes for a %d-byte body, want at most %d", c.name, cap(got), len(c.body), c.wantCap)
		}
	}
}
