package engine_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A timeout fault holds requests unanswered while it lasts. Cleared, the
// requests it held go on to the endpoint: they waited for the request's
// deadline, and failed up to server.request_timeout after the operator
// had cleared the fault (168 of 202 requests in an audit, while the
// console said the fault was gone). A write held so is sent once, then.
func TestFault_ClearingATimeoutFaultReleasesTheRequestsItHolds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) { c.Server.RequestTimeout = 5 * time.Second },
		sim.Config{Latency: fixed(time.Millisecond)})
	for i := range 5 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s0/fault", `{"mode":"timeout"}`); code != http.StatusOK {
		t.Fatalf("inject timeout: HTTP %d %s", code, body)
	}
	read, write := make(chan reply, 1), make(chan reply, 1)
	go func() { read <- h.call(10, "eth_getBalance", addr, "latest") }()
	go func() { write <- h.call(11, "eth_sendRawTransaction", "0x01") }()
	for deadline := time.Now().Add(3 * time.Second); h.endpoint("s0").InFlight < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s0 has %d attempts in flight; want the read and the write held", h.endpoint("s0").InFlight)
		}
	}
	if n := len(h.sims[0].Submissions()); n != 0 {
		t.Fatalf("the sim got %d writes while the fault held it", n)
	}
	cleared := time.Now()
	if code, body := h.adminDo(http.MethodDelete, "/v1/endpoints/s0/fault", ""); code != http.StatusOK {
		t.Fatalf("clear: HTTP %d %s", code, body)
	}
	for name, ch := range map[string]chan reply{"read": read, "write": write} {
		r := <-ch
		mustOK(t, r)
		if after := time.Since(cleared); after > 2*time.Second {
			t.Fatalf("%s answered %s after the fault was cleared; want it released at the clear", name, after)
		}
	}
	if n := len(h.sims[0].Submissions()); n != 1 {
		t.Fatalf("the sim got the write %d times, want once", n)
	}
}
