package bench_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// An admin API whose events answers come 300 ms late (a busy instance, a
// proxy): the readmitted step timed readmission by when it had read the
// events after seeing the endpoint back, "readmitted 9.922s after the
// fault was cleared" beside its own evidence "DELETE … at +1.471s" and
// "event #27 at +11.376s: breaker b half-open→closed" (9.905s). The time
// it reports is the breaker's closing (for a stale fault, the head's
// return), from the DELETE it printed.
func TestDrill_ReadmittedIsTimedByTheEventThatLetItBack(t *testing.T) {
	for _, c := range []struct{ mode, back string }{
		{"error", `at \+(\S+): breaker alpha half-open→closed`},
		{"stale", `at \+(\S+): head alpha lagging→in-sync`},
	} {
		t.Run(c.mode, func(t *testing.T) { readmittedIsTimedByItsEvent(t, c.mode, c.back) })
	}
}

func readmittedIsTimedByItsEvent(t *testing.T, mode, backEvent string) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 1, BreakerCooldown: 500 * time.Millisecond, ProbeInterval: 200 * time.Millisecond})
	front := lateAdmin(t, eng.AdminURL, "/v1/events")

	var clear, back bench.DrillStep
	_, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: front.URL}, Mode: mode, StepTimeout: 10 * time.Second},
		func(s bench.DrillStep) {
			if s.State == bench.StepRunning {
				return
			}
			switch s.Name {
			case bench.StepClear:
				clear = s
			case bench.StepReadmitted:
				back = s
			}
		})
	if back.State != bench.StepPassed {
		t.Fatalf("readmitted step %+v (drill: %v)", back, err)
	}
	at := func(re string, lines ...string) time.Duration {
		t.Helper()
		for _, l := range lines {
			if m := regexp.MustCompile(re).FindStringSubmatch(l); m != nil {
				d, err := time.ParseDuration(m[1])
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
		}
		t.Fatalf("no %q in %q", re, lines)
		return 0
	}
	deleted := at(`^DELETE /v1/endpoints/alpha/fault at \+(\S+)$`, clear.Evidence...)
	closed := at(backEvent, back.Evidence...)
	took := at(`^alpha readmitted (\S+) after the fault was cleared`, back.Summary)
	if d := took - (closed - deleted); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("summary %q: readmitted %s after the clear, but its evidence shows the DELETE at +%s and the readmission at +%s (%s)", back.Summary, took, deleted, closed, closed-deleted)
	}
}
