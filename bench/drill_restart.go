package bench

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// An instance restarted mid-drill has forgotten the drill's fault, its
// breakers and its windows: whatever the drill measures after that says
// nothing of failover. Its cut-out step then waited for a breaker that
// would never open and failed ("not cut out"), and a readmission step
// passed on an endpoint that had never been out. The drill notes when the
// instance started (the status's started) as it takes its lease, checks it
// at the end of every step and when its lease is lost, and stops with no
// verdict when it changed.

// drillStopped is why a drill stopped itself, with no verdict: its lease
// taken by another drill, or the instance restarted.
type drillStopped struct{ text string }

func (e *drillStopped) Error() string { return e.text }

// restartedSince says how the instance restarted since started, "" if it
// did not (or its status cannot be read now: the step's own reads say so).
func restartedSince(ctx context.Context, admin *Admin, started time.Time) string {
	if started.IsZero() {
		return ""
	}
	st, err := admin.status(ctx)
	if err != nil {
		return ""
	}
	return restartedWords(st.Started, started)
}

// restartedWords says that the instance started at now had started at
// then before, "" if it is the same start.
func restartedWords(now, then time.Time) string {
	if now.IsZero() || then.IsZero() || now.Equal(then) {
		return ""
	}
	return fmt.Sprintf("the instance restarted at %s (it had started at %s): the fault the drill injected and what it measured are gone",
		now.Format("15:04:05.000"), then.Format("15:04:05.000"))
}

// status reads the instance's status for a step. While the instance
// refuses connections (a restart's gap: its ports closed, then open
// again) it asks again every cleanupRetry for up to cleanupFor: a step
// failed at once on "connection refused" before. A status from an instance
// that restarted since the drill began stops the drill, no verdict.
func (d *drill) status(ctx context.Context) (engine.Snapshot, error) {
	deadline := time.Now().Add(cleanupFor)
	for {
		st, err := d.admin.status(ctx)
		if err == nil {
			if restart := d.restartedIn(st); restart != "" {
				d.stopRun(&drillStopped{text: restart})
				return st, context.Cause(ctx)
			}
			return st, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return st, err
		}
		if time.Now().After(deadline) {
			// Not a restart's gap: the instance went away (stopped, not
			// restarted), and its fault and what the drill measured with
			// it. That says nothing of failover: no verdict, as a
			// restart (it said FAILED at the step that was waiting).
			if d.stopRun == nil {
				return st, err
			}
			d.gone = true
			d.stopRun(&drillStopped{text: fmt.Sprintf("the instance stopped answering its admin API (connection refused for %s): the fault the drill injected and what it measured went with it", cleanupFor)})
			return st, context.Cause(ctx)
		}
		select {
		case <-ctx.Done():
			return st, err
		case <-time.After(cleanupRetry):
		}
	}
}

// restartedIn says how st shows the instance restarted since the drill
// took its lease, "" if it does not.
func (d *drill) restartedIn(st engine.Snapshot) string {
	if d.lease == nil || d.stopRun == nil {
		return ""
	}
	return restartedWords(st.Started, d.lease.instance)
}

// goneAway says whether err, a step's, is the instance's admin API
// refusing connections because the instance went away: it asks for the
// status as status does (for up to cleanupFor while it refuses), which
// stops the drill, no verdict, when it never answers again.
func (d *drill) goneAway(ctx context.Context, err error) bool {
	if d.stopRun == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		return false
	}
	_, _ = d.status(ctx)
	return d.gone && ctx.Err() != nil
}
