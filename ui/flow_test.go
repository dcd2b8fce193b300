package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/rpcdash/rpcdash/engine"
)

// Flows through a real Bubble Tea program (teatest) over a real engine:
// keys in, the rendered terminal stream out.

func startFlow(t *testing.T, r *rig) *teatest.TestModel {
	t.Helper()
	m := New(Options{Backend: Local{Engine: r.eng}, Refresh: 50 * time.Millisecond, Location: time.UTC})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	t.Cleanup(func() {
		tm.Send(keyMsg("q"))
		tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	})
	waitScreen(t, tm, 5*time.Second, "alpha", "beta")
	return tm
}

// waitScreen waits until the terminal stream has shown every text.
func waitScreen(t *testing.T, tm *teatest.TestModel, limit time.Duration, texts ...string) {
	t.Helper()
	seen := map[string]bool{}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, s := range texts {
			if bytes.Contains(b, []byte(s)) {
				seen[s] = true
			}
		}
		return len(seen) == len(texts)
	}, teatest.WithDuration(limit), teatest.WithCheckInterval(20*time.Millisecond))
}

func TestFlow_DrainWithConfirmation(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	tm := startFlow(t, r)
	tm.Send(keyMsg("d"))
	waitScreen(t, tm, 3*time.Second, "Drain alpha?", "no (the default)")
	if r.eng.Snapshot().Endpoints[0].Drained {
		t.Fatal("drained before the confirmation")
	}
	tm.Send(keyMsg("y"))
	waitScreen(t, tm, 3*time.Second, "DRAINED", "✓ drain alpha")
	if !r.eng.Snapshot().Endpoints[0].Drained {
		t.Fatal("the engine is not drained")
	}
}

func TestFlow_FaultFromTheMenuExpires(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	tm := startFlow(t, r)
	tm.Send(keyMsg("f"))
	waitScreen(t, tm, 3*time.Second, "Inject a fault on alpha")
	// mode: error; duration: down to the field, left to the shortest (5s).
	for _, k := range []string{"right", "down", "down", "down", "left", "left", "left"} {
		tm.Send(keyMsg(k))
	}
	waitScreen(t, tm, 3*time.Second, "‹ 5s ›")
	tm.Send(keyMsg("enter"))
	waitScreen(t, tm, 3*time.Second, "Inject this fault? error fault on alpha", "for 5s, then it clears itself")
	tm.Send(keyMsg("y"))
	waitScreen(t, tm, 3*time.Second, "FAULT error")
	if f := r.eng.Snapshot().Endpoints[0].Fault; f == nil || f.Duration != 5*time.Second {
		t.Fatalf("engine fault %+v", f)
	}
	// Nothing but its own timer ends it.
	waitScreen(t, tm, 10*time.Second, "fault expired")
	if f := r.eng.Snapshot().Endpoints[0].Fault; f != nil {
		t.Fatalf("fault still on after it expired: %+v", f)
	}
	evs := r.eng.Events(0)
	if last := evs[len(evs)-1]; last.Actor != engine.ActorEngine || !strings.Contains(last.Message, "expired") {
		t.Fatalf("last event %+v", last)
	}
}

func TestFlow_DelayUpThenAuto(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	r.read(t, 3, "eth_getBalance")
	tm := startFlow(t, r)
	waitScreen(t, tm, 3*time.Second, "eth_getBalance")
	tm.Send(keyMsg("tab"))
	tm.Send(keyMsg("down"))
	tm.Send(keyMsg("+"))
	waitScreen(t, tm, 3*time.Second, "300ms live", "✓ hedge delay of eth_getBalance → 300ms")
	if h := r.eng.Snapshot().Methods["eth_getBalance"].Hedge; h.Delay != 300*time.Millisecond || h.DelaySource != "live" {
		t.Fatalf("engine delay %+v", h)
	}
	tm.Send(keyMsg("a"))
	waitScreen(t, tm, 3*time.Second, "250ms cold", "→ auto")
	if h := r.eng.Snapshot().Methods["eth_getBalance"].Hedge; h.DelaySource != "cold" {
		t.Fatalf("engine delay after a: %+v", h)
	}
}
