package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// TestFailover_GethStoppedAndRestarted stops geth under a steady stream of
// reads from go-ethereum's client: the reads keep succeeding on simA, and
// when geth comes back on the same port and datadir its breaker closes
// again after the cooldown and it answers once more.
func TestFailover_GethStoppedAndRestarted(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctx := ctxT(t)
	headBefore, err := s.direct.eth.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}

	rd := startReader(t, s.rpcdash.URL())
	rd.waitAnswers(t, "geth", 0, 1)

	s.geth.stop()
	// The one call in flight when geth exited may still have been
	// answered by it; every later one cannot have been.
	stoppedAt := rd.mark() + 1
	testutil.WaitUntil(t, 30*time.Second, "geth's breaker to open", func() bool {
		return s.rpcdash.status().breaker("geth") == "open"
	})
	rd.waitAnswers(t, "simA", stoppedAt, 10) // served while geth is out
	restartAt := rd.mark()

	s.geth.restart()
	testutil.WaitUntil(t, 60*time.Second, "geth's breaker to close again", func() bool {
		return s.rpcdash.status().breaker("geth") == "closed"
	})
	rd.stop()

	if errs := rd.errors(); len(errs) > 0 {
		t.Errorf("%d reads failed at the client across the stop and restart; first: %v", len(errs), errs[0])
	}
	if n := rd.countBetween(stoppedAt, restartAt, "geth"); n != 0 {
		t.Errorf("%d answers came from geth while it was stopped", n)
	}
	if n := rd.countBetween(stoppedAt, restartAt, "simA"); n < 10 {
		t.Errorf("simA answered %d reads while geth was stopped, want at least 10", n)
	}
	t.Logf("reads: %d answered, by endpoint %v; %d needed more than one attempt", rd.mark(), rd.byEndpoint(), rd.failedOver())

	evs := s.rpcdash.breakerEvents("geth")
	if len(evs) < 2 || evs[0] != "closed>open" || !strings.HasSuffix(evs[len(evs)-1], ">closed") {
		t.Errorf("geth's breaker transitions %v, want closed>open first and >closed last", evs)
	}
	t.Logf("geth's breaker transitions: %v", evs)

	// Readmitted: with simA drained, geth answers again, on the same chain.
	s.rpcdash.drain("simA")
	s.via.rec.take()
	head, err := s.via.eth.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answeredBy(t, "geth", s.via.rec.last(t))
	if head != headBefore {
		t.Errorf("geth's head after restart %d, want %d (same datadir)", head, headBefore)
	}
}
