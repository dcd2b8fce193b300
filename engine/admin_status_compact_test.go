package engine_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// GET /v1/status is indented for a person with curl; ?compact=1 gives the
// same document on one line, for a program polling it (an attached
// console asks four times a second). Anything but a boolean is a 400
// naming the parameter, and so is an unknown parameter.
func TestAdminStatus_CompactIsTheSameDocumentOnOneLine(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	code, pretty := h.adminDo("GET", "/v1/status", "")
	if code != 200 || !bytes.Contains(pretty, []byte("\n  \"")) {
		t.Fatalf("indented by default: HTTP %d %.80s", code, pretty)
	}
	for _, v := range []string{"1", "true"} {
		code, compact := h.adminDo("GET", "/v1/status?compact="+v, "")
		if code != 200 || bytes.Count(compact, []byte("\n")) != 1 || len(compact) >= len(pretty) {
			t.Fatalf("compact=%s: HTTP %d, %d lines, %d bytes against %d indented", v, code, bytes.Count(compact, []byte("\n")), len(compact), len(pretty))
		}
		var a, b engine.Snapshot
		if err := json.Unmarshal(compact, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(pretty, &b); err != nil {
			t.Fatal(err)
		}
		if len(a.Endpoints) != 2 || a.Endpoints[0].Name != b.Endpoints[0].Name || a.Client.Requests != b.Client.Requests {
			t.Fatalf("compact=%s is another document: %d endpoints, %d requests against %d", v, len(a.Endpoints), a.Client.Requests, b.Client.Requests)
		}
	}
	if code, b := h.adminDo("GET", "/v1/status?compact=0", ""); code != 200 || !bytes.Contains(b, []byte("\n  \"")) {
		t.Fatalf("compact=0: HTTP %d, want indented", code)
	}
	code, b := h.adminDo("GET", "/v1/status?compact=yes", "")
	if code != 400 || !strings.Contains(string(b), "compact") {
		t.Fatalf("compact=yes: HTTP %d %s, want 400 naming compact", code, b)
	}
	// As every admin GET that takes parameters: a misspelt one is not
	// dropped (it was: 200, indented).
	code, b = h.adminDo("GET", "/v1/status?compcat=1", "")
	if code != 400 || !strings.Contains(string(b), "compcat: unknown parameter (compact)") {
		t.Fatalf("compcat=1: HTTP %d %s, want 400 naming compcat", code, b)
	}
}
