package engine

import (
	"fmt"
	"testing"
	"time"
)

// A method past the tracked cap shares the other entry under its own name:
// its "cannot serve" must not mark that entry, which stands for every
// method past the cap (and for names that are no method at all).
func TestCannotServe_SharedEntryIsNeverMarked(t *testing.T) {
	e, _ := clockedEngine(t, 1, nil)
	ep := e.endpoints[0]
	for i := range maxTrackedMethods {
		ep.stats(fmt.Sprintf("m%d", i))
	}
	now := time.Unix(100, 0)
	tracked, late := ep.stats("m0"), ep.stats("eth_pastTheCap")
	if late != ep.stats(otherMethod) {
		t.Fatal("a method past the cap did not get the shared entry")
	}
	tracked.markCannotServe(now)
	late.markCannotServe(now)
	if !tracked.cannotServe(now, time.Second) {
		t.Error("a tracked method was not marked")
	}
	if late.cannotServe(now, time.Second) {
		t.Error("the shared entry was marked: every method past the cap, and every invalid name, would rank the endpoint last")
	}
}
