package engine_test

import (
	"bytes"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// BenchmarkServe_HugeBatchRefused is the cost of refusing a 5 MB batch of
// 2.6 million two-byte elements (under server.max_body_bytes, far over
// server.max_batch), its length announced or not.
func BenchmarkServe_HugeBatchRefused(b *testing.B) {
	body := tinyBatch(2_600_000)
	for _, known := range []bool{true, false} {
		name := "chunked"
		if known {
			name = "content-length"
		}
		b.Run(name, func(b *testing.B) {
			cfg := engine.Default()
			cfg.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
			e, err := engine.New(cfg, engine.Options{})
			if err != nil {
				b.Fatal(err)
			}
			h := e.RPCHandler()
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("POST", "http://127.0.0.1/", io.NopCloser(bytes.NewReader(body)))
				r.Header.Set("Content-Type", "application/json")
				r.ContentLength = -1
				if known {
					r.ContentLength = int64(len(body))
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if !strings.Contains(w.Body.String(), "-32005") {
					b.Fatalf("HTTP %d %.200s: want -32005", w.Code, w.Body.String())
				}
			}
		})
	}
}
