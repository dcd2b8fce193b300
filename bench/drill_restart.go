package bench

import (
	"context"
	"fmt"
	"time"
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
	if err != nil || st.Started.IsZero() || st.Started.Equal(started) {
		return ""
	}
	return fmt.Sprintf("the instance restarted at %s (it had started at %s): the fault the drill injected and what it measured are gone",
		st.Started.Format("15:04:05.000"), started.Format("15:04:05.000"))
}
