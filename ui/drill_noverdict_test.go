package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A drill that never ran (another drill holds the instance's lease) or
// stopped itself (the attached instance restarted, another drill took its
// lease) is no verdict on failover, as rpcdash drill says (`STOPPED
// during step …`). The console read `FAILED after 29s at step 7
// readmitted` over a step whose own summary said "stopped, no verdict",
// and `FAILED after 0s: another drill is running` for one that never ran:
// a false alarm about failover during an incident.
func TestUpdate_DrillStoppedOrNotRunIsNoVerdict(t *testing.T) {
	restarted := "stopped, no verdict: the instance restarted at 08:51:36.489 (it had started at 08:50:05.908)"
	cases := []struct {
		name, want, status string
		run                DrillFunc
	}{
		{"stopped", "STOPPED after", "stopped during step 7 readmitted", func(_ context.Context, _ string, onStep func(DrillStep)) error {
			for i, name := range drillSteps[:6] {
				onStep(DrillStep{Index: i, Name: name, State: DrillPassed, Took: time.Second, Summary: name + " ok"})
			}
			onStep(DrillStep{Index: 6, Name: "readmitted", State: DrillFailed, Took: 26 * time.Second, Summary: restarted})
			return NoVerdict{Err: errors.New(`interrupted during step "readmitted": ` + restarted)}
		}},
		{"not run", "NOT RUN", "not run, no verdict: another drill is running", func(context.Context, string, func(DrillStep)) error {
			return NoVerdict{Err: errors.New("another drill is running against this instance (a drill is running: rpcdash drill, since 08:51:07)")}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ended := make(chan struct{})
			run := func(ctx context.Context, mode string, onStep func(DrillStep)) error {
				defer close(ended)
				return c.run(ctx, mode, onStep)
			}
			r := newRig(t, "alpha", "beta")
			m := New(Options{Backend: Local{Engine: r.eng}, Location: time.UTC,
				Drill: &Drill{Run: run, Steps: drillSteps, Modes: []string{"error"}, Load: "It sends no reads of its own"}})
			mm, _ := m.Update(sizeMsg(120, 36))
			m = press(t, refreshed(t, mm.(Model)), "D", "y")
			<-ended
			v := m.View()
			if strings.Contains(v, "FAILED") || strings.Contains(v, "✗") || !strings.Contains(v, c.want) {
				t.Errorf("result:\n%s", v)
			}
			if !strings.Contains(m.status.text, c.status) || strings.Contains(m.status.text, "failed") {
				t.Errorf("status line %q", m.status.text)
			}
		})
	}
}
