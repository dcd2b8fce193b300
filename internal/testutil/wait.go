package testutil

import (
	"testing"
	"time"
)

// Polling starts fast, so that a condition that holds almost at once is
// seen almost at once, and slows to pollMax, so that a long wait does not
// spin on a machine shared with other tests.
const (
	pollMin = time.Millisecond
	pollMax = 25 * time.Millisecond
)

// WaitUntil polls cond until it holds and fails t after limit, naming what
// it waited for. It never sleeps once cond holds: the bound only keeps a
// broken build from hanging, the condition is what the test asserts.
func WaitUntil(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(limit, cond) {
		t.Fatalf("timed out after %s waiting for %s", limit, what)
	}
}

// Poll calls cond until it holds (true) or limit has passed (false).
func Poll(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for pause := pollMin; !cond(); pause = min(pause*3/2, pollMax) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
	return true
}
