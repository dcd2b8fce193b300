package engine

import "testing"

// A count of the pool reads its endpoints one at a time: two changing at
// once, one coming back as another goes out, can be read as both out, a
// share the pool never had. Panic routing is entered at once on a count
// below router.panic_threshold, so such a count is taken again before it
// is entered on. Four endpoints, two routable (at the 0.50 threshold), a
// count torn to 1 of 4. Before: panic routing entered, held for panicHold
// past the next good count (about a second: unroutable endpoints in
// every read's order, a panic event and banner for a share never seen).
func TestPanic_ACountTornByTwoEndpointsChangingAtOnceEntersNoPanic(t *testing.T) {
	for _, tc := range []struct {
		name  string
		out   int  // endpoints excluded (unhealthy): the pool's real state
		panic bool // the torn count 1 of 4 enters panic routing
	}{
		{"2 of 4 routable, counted 1 of 4", 2, false},
		{"1 of 4 routable, counted so", 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clock := clockedEngine(t, 4, nil)
			for _, ep := range e.endpoints[:tc.out] {
				e.Exclude(ep.Name, ExcludeUnhealthy, "getHealth: Node is behind by 42 slots")
			}
			now := clock.Now()
			if r, p, _ := e.poolRoutable(now); r != 4-tc.out || p != 4 {
				t.Fatalf("pool: %d of %d routable; want %d of 4", r, p, 4-tc.out)
			}
			if got := e.decidePanic(1, 4, now); got != tc.panic {
				_, why, _ := e.panicInfo()
				t.Fatalf("a count of 1 of 4 with %d of 4 routable: panic routing %v (%s); want %v", 4-tc.out, got, why, tc.panic)
			}
		})
	}
}
