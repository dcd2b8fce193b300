package engine_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// A 200 answer longer than MaxBytes was handed on cut, without an error:
// `rpcdash status --format json` against a server that is not rpcdash
// printed exactly 64 MiB of broken JSON and exited 0, and the table said
// only "unexpected end of JSON input". It is an error now, naming the
// limit; an answer of exactly MaxBytes still fits, and an error answer
// (not 200) is still shown from its start.
func TestAdminClient_AnswerOverMaxBytesIsRefusedNotCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusBadGateway)
		}
		w.Write([]byte(strings.Repeat("a", n)))
	}))
	defer srv.Close()
	c := engine.AdminClient{Base: srv.URL, HTTP: srv.Client(), MaxBytes: 1000}
	ctx := context.Background()

	var raw []byte
	if err := c.Do(ctx, http.MethodGet, "/ok?n=1000", nil, &raw); err != nil || len(raw) != 1000 {
		t.Errorf("answer of exactly MaxBytes: read %d bytes, %v; want 1000 and no error", len(raw), err)
	}
	raw = nil
	err := c.Do(ctx, http.MethodGet, "/ok?n=1001", nil, &raw)
	var ae *engine.AdminError
	if !errors.Is(err, engine.ErrAnswerTooLarge) || !errors.As(err, &ae) || !ae.Reading || raw != nil {
		t.Fatalf("answer of MaxBytes+1: %v, %d bytes handed on; want ErrAnswerTooLarge (Reading) and none", err, len(raw))
	}
	if !strings.Contains(err.Error(), "1000 bytes") {
		t.Errorf("error %q does not name the limit", err)
	}
	err = c.Do(ctx, http.MethodGet, "/fail?n=5000", nil, nil)
	if !errors.As(err, &ae) || ae.Code != http.StatusBadGateway || ae.Text == "" {
		t.Errorf("long error answer: %v; want HTTP 502 with its start", err)
	}
}
