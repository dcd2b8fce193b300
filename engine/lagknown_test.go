package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint whose head has not been seen for three probe intervals (down:
// its probes fail) has a lag no one knows. The engine carries its last head
// forward at the chain's pace, so lag read 0 throughout: an endpoint killed
// for 4 minutes showed lag 0 and came back 239 blocks behind. The status
// says when its head was last seen (head_seen_at), and LagUnknown says the
// lag is unknown from then on, over the admin API too.
func TestLag_UnknownOnceNoHeadIsSeenForThreeProbeIntervals(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	one := sim.Config{Latency: fixed(time.Millisecond)}
	h := newClockedHarness(t, clock, nil, one, one)
	interval := h.eng.Config().Probes.Interval
	h.eng.ObserveProbeHead("s0", 0x100)
	h.eng.ObserveProbeHead("s1", 0x100)
	seen := clock.Now()
	for range 3 {
		clock.Advance(interval)
		h.eng.ObserveProbeHead("s1", 0x100)
	}
	s := h.status()
	for _, ep := range s.Endpoints {
		if ep.LagUnknown(s) {
			t.Fatalf("%s: lag unknown three intervals after its head was seen (head seen %s, now %s)", ep.Name, ep.HeadSeenAt, s.Time)
		}
	}
	clock.Advance(time.Second)
	h.eng.ObserveProbeHead("s1", 0x100)
	s = h.status()
	down, up := h.endpoint("s0"), h.endpoint("s1")
	if !down.HeadSeenAt.Equal(seen) {
		t.Fatalf("s0's head seen at %s, want %s", down.HeadSeenAt, seen)
	}
	if !down.LagUnknown(s) || down.Lag != 0 {
		t.Fatalf("s0, no head seen for %s: lag unknown %v (lag %d), want unknown (the engine's carried lag 0)", s.Time.Sub(down.HeadSeenAt), down.LagUnknown(s), down.Lag)
	}
	if up.LagUnknown(s) {
		t.Fatalf("s1, its head seen just now: lag unknown")
	}
	var wire struct {
		Endpoints []struct {
			Name       string     `json:"name"`
			HeadSeenAt *time.Time `json:"head_seen_at"`
		} `json:"endpoints"`
	}
	code, body := h.adminDo("GET", "/v1/status", "")
	if code != 200 {
		t.Fatalf("GET /v1/status: HTTP %d %s", code, body)
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		t.Fatal(err)
	}
	for _, ep := range wire.Endpoints {
		if ep.HeadSeenAt == nil {
			t.Fatalf("%s: no head_seen_at in /v1/status", ep.Name)
		}
	}
}
