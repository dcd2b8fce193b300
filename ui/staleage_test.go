package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// hung is an attached instance that takes the refresh and never answers:
// the refresh fails at fetchTimeout (the test's clock moves it there).
type hung struct{ Backend }

func (hung) Snapshot(context.Context) (engine.Snapshot, error) {
	return engine.Snapshot{}, context.DeadlineExceeded
}

func (hung) Events(context.Context, uint64) ([]engine.Event, error) {
	return nil, context.DeadlineExceeded
}

// STALE's age is how long the instance has not answered: counted from
// the failed refresh's end, an instance hung (SIGSTOP on the binary) read
// `STALE 3s` 6s after its last answer, fetchTimeout short, in the header
// and in the drain question's "has not answered for".
func TestStale_AgeCountsFromTheUnansweredRefreshNotItsTimeout(t *testing.T) {
	clock := fixedNow()
	m := New(Options{Backend: hung{}, Location: time.UTC, Now: func() time.Time { return clock }})
	mm, _ := m.Update(sizeMsg(120, 36))
	m = mm.(Model)
	m.onSnapshot(snapshotMsg{snap: healthySnapshot()})
	cmd := m.refresh() // sent now; the instance hangs
	msg := cmd()
	clock = clock.Add(fetchTimeout)
	mm, _ = m.Update(msg)
	m = mm.(Model)
	if m.fetchErr == nil {
		t.Fatal("the hung refresh did not fail")
	}
	clock = clock.Add(3 * time.Second)
	if v := m.View(); !strings.Contains(v, "STALE 6s") {
		t.Errorf("6s after the unanswered refresh was sent, the header says:\n%s", strings.Join(strings.Split(v, "\n")[:3], "\n"))
	}
}
