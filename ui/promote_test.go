package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// shadowCompared makes beta a shadow (every read mirrored), its sim
// failing every request when failing, and sends n reads, waiting until
// each mirror's outcome is counted.
func (r *rig) shadowCompared(t *testing.T, n int64, failing bool) {
	t.Helper()
	if _, err := r.eng.SetRole(engine.ActorAdmin, "beta", engine.RoleShadow, nil); err != nil {
		t.Fatal(err)
	}
	r.failBeta(t, n, failing)
}

// failBeta sends n more reads with beta's sim failing (or not) and waits
// for the mirrors' outcomes.
func (r *rig) failBeta(t *testing.T, n int64, failing bool) {
	t.Helper()
	if failing {
		r.sims[1].SetMode(sim.ModeError)
	}
	var before int64
	if sh := r.eng.Snapshot().Endpoints[1].Shadow; sh != nil {
		before = sh.Compared
	}
	r.read(t, int(n), "eth_chainId")
	testutil.WaitUntil(t, 10*time.Second, "the mirrors' outcomes", func() bool {
		sh := r.eng.Snapshot().Endpoints[1].Shadow
		return sh != nil && sh.Compared >= before+n
	})
}

// The audit's case in the console: a shadow whose comparison failed,
// promoted from the role menu. The question says the engine would refuse
// it and why, with the figures; y does not send it but asks once more,
// to force it; n there cancels, nothing sent; y forces it, and the engine's
// event says forced.
func TestUpdate_RoleMenuSaysAFailedComparisonIsRefusedAndOnlyForcesOnASecondYes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		r.shadowCompared(t, 25, true)
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "r", "left", "left", "enter") // beta: shadow → primary
		q := m.confirm.question
		if m.overlay != overlayConfirm || !strings.Contains(q, "The engine would refuse it: shadow beta: match_rate 0.00 over 25 compared (0 mismatch, 25 errors), below router.promote_match_rate 1.00") ||
			!strings.Contains(q, "y asks once more, to force it") {
			t.Fatalf("the question does not say the engine refuses it: %q", q)
		}
		m = press(t, m, "y")
		wantCalls(t, sp)
		q = m.confirm.question
		if m.overlay != overlayConfirm || !strings.HasPrefix(q, "Force beta from shadow to primary? The engine refuses it on beta's own evidence: shadow beta: match_rate 0.00") ||
			!strings.Contains(m.View(), "Force beta from shadow to primary?") {
			t.Fatalf("no second question to force it: %q\n%s", q, m.View())
		}
		m = press(t, m, "n")
		wantCalls(t, sp)
		if ep := r.eng.Snapshot().Endpoints[1]; ep.Role != engine.RoleShadow || !strings.Contains(m.status.text, "cancelled: role of beta → primary (forced)") {
			t.Fatalf("after n: beta a %s, status %q", ep.Role, m.status.text)
		}
		m = press(t, m, "r", "left", "left", "enter", "y", "y")
		wantCalls(t, sp, "SetRole beta primary force")
		if ep := r.eng.Snapshot().Endpoints[1]; ep.Role != engine.RolePrimary {
			t.Fatalf("forced: beta a %s", ep.Role)
		}
		if ev := lastEvent(t, r); ev.Type != engine.EventRole || ev.Actor != engine.ActorConsole ||
			!strings.Contains(ev.Message, "promoted with force over a failed check: comparison failed: match_rate 0.00 over 25 compared") {
			t.Fatalf("engine event %+v", ev)
		}
	})
}

// A shadow whose every answer matched but came far slower than the
// client's (the seeds audit's G5): the question says the engine would
// refuse it on its latency, with the figures, attached as in process (the
// mirrors' count crosses the wire).
func TestUpdate_RoleMenuSaysAFarSlowerShadowIsRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		r.sims[1].SetExtraLatency(100 * time.Millisecond)
		r.shadowCompared(t, 25, false)
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "r", "left", "left", "enter") // beta: shadow → primary
		q := m.confirm.question
		if m.overlay != overlayConfirm || !strings.Contains(q, "The engine would refuse it: shadow beta: latency on mirrored reads p50 1") ||
			!strings.Contains(q, "surely slower (its median above that p95 and 5ms more)") {
			t.Fatalf("the question does not say the engine refuses the slow shadow: %q", q)
		}
		m = press(t, m, "n")
		wantCalls(t, sp)
	})
}

// A promotion the engine takes shows, in its question, the comparison it
// rests on.
func TestUpdate_RoleMenuShowsTheComparisonAPromotionRestsOn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		r.shadowCompared(t, 25, false)
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "r", "right", "enter") // beta: shadow → canary (at 5%, not its shadow's 100%)
		if q := m.confirm.question; !strings.Contains(q, "The promotion rests on: comparison passed: match_rate 1.00 over 25 compared (0 mismatch, 0 errors), at least 1.00 needed") {
			t.Fatalf("the question lacks the comparison: %q", q)
		}
		m = press(t, m, "y")
		wantCalls(t, sp, "SetRole beta canary share=0.05")
		if ev := lastEvent(t, r); !strings.Contains(ev.Message, "promoted on: comparison passed") {
			t.Fatalf("engine event %+v", ev)
		}
	})
}

// When the engine refuses a promotion the question judged on older
// figures (the comparison failed since), the console says why and offers
// to force it; it does not force it.
func TestUpdate_ARefusedPromotionOffersForceAndDoesNotForce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		r.shadowCompared(t, 5, false)
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "r", "left", "left", "enter")
		if q := m.confirm.question; !strings.Contains(q, "The promotion rests on: unjudged, too little evidence: comparison unjudged: 5 compared, fewer than 20") {
			t.Fatalf("the question does not say unjudged: %q", q)
		}
		r.failBeta(t, 25, true)
		m = press(t, m, "y")
		wantCalls(t, sp, "SetRole beta primary")
		if m.overlay != overlayConfirm || !strings.HasPrefix(m.confirm.question, "Force beta from shadow to primary?") ||
			!strings.Contains(m.status.text, "match_rate 0.16 over 30 compared (0 mismatch, 25 errors)") {
			t.Fatalf("after the refusal: overlay %v, question %q, status %q", m.overlay, m.confirm.question, m.status.text)
		}
		if ep := r.eng.Snapshot().Endpoints[1]; ep.Role != engine.RoleShadow {
			t.Fatalf("refused: beta a %s", ep.Role)
		}
		m = press(t, m, "esc")
		wantCalls(t, sp)
		if m.overlay != overlayNone {
			t.Fatalf("esc left overlay %v", m.overlay)
		}
	})
}
