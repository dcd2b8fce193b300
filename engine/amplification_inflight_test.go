package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// A method's amplification is the mean X-Rpcdash-Attempts of its requests
// that ended. Its attempts were counted as sent and its requests as they
// ended, so a write still in flight read as sent twice (1 write answered,
// 1 held: 2 attempts for 1 request, "amplification 2"), during exactly the
// incidents an operator reads it in.
func TestStatus_AmplificationDoesNotCountTheAttemptsOfRequestsInFlight(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	mustOK(t, h.call(1, "eth_sendRawTransaction", "0x01"))
	h.sims[0].SetMethodLatency("eth_sendRawTransaction", time.Second)
	held := make(chan reply, 1)
	go func() { held <- h.call(2, "eth_sendRawTransaction", "0x02") }()
	for deadline := time.Now().Add(3 * time.Second); h.endpoint("s0").InFlight < 1; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second write never went out")
		}
	}
	if m := h.status().Methods["eth_sendRawTransaction"]; m.Amplification != 1 || m.Primary != 2 {
		t.Fatalf("one write answered, one in flight: amplification %v over %d attempts; want 1 (each sent once)", m.Amplification, m.Primary)
	}
	mustOK(t, <-held)
	if m := h.status().Methods["eth_sendRawTransaction"]; m.Amplification != 1 || m.Requests != 2 {
		t.Fatalf("both writes answered: amplification %v of %d requests; want 1", m.Amplification, m.Requests)
	}
}
