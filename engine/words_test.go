package engine

import "testing"

// An event's words agree with their number ("1 request in flight finish"
// was on the console's events panel).
func TestInFlightFinish_OneAndMany(t *testing.T) {
	for n, want := range map[int64]string{0: "0 requests in flight finish", 1: "1 request in flight finishes", 3: "3 requests in flight finish"} {
		if got := inFlightFinish(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}
