package breaker

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// brStep is one action on a breaker in a scripted scenario, with what it
// must observe.
type brStep struct {
	do    string // acquire, routable, success, failure, release, trip, wait, state
	trial bool
	d     time.Duration
	ok    bool // acquire/routable: granted
	state State
}

func acquire(ok, trial bool) brStep  { return brStep{do: "acquire", ok: ok, trial: trial} }
func routable(ok, trial bool) brStep { return brStep{do: "routable", ok: ok, trial: trial} }
func success(trial bool) brStep      { return brStep{do: "success", trial: trial} }
func failure(trial bool) brStep      { return brStep{do: "failure", trial: trial} }
func release(trial bool) brStep      { return brStep{do: "release", trial: trial} }
func trip() brStep                   { return brStep{do: "trip"} }
func wait(d time.Duration) brStep    { return brStep{do: "wait", d: d} }
func is(s State) brStep              { return brStep{do: "state", state: s} }

// wantTr is an expected transition: states, cooldown (for →open), a
// substring of the reason and the offset from the scenario start.
type wantTr struct {
	from, to State
	cooldown time.Duration
	reason   string
	at       time.Duration
}

func TestBreaker_StateMachine(t *testing.T) {
	base := Settings{Failures: 3, Successes: 2, HalfOpenTrials: 1, Cooldown: 10 * time.Second, MaxCooldown: 35 * time.Second}
	C, O, H := Closed, Open, HalfOpen
	s := time.Second
	open3 := []brStep{acquire(true, false), failure(false), failure(false), failure(false), is(O)}

	tests := []struct {
		name  string
		set   func(*Settings)
		steps []brStep
		want  []wantTr
	}{
		{
			name:  "ThresholdCountsConsecutiveFailures",
			steps: []brStep{failure(false), failure(false), is(C), failure(false), is(O), acquire(false, false), routable(false, false)},
			want:  []wantTr{{C, O, 10 * s, "3 failures in a row, last: boom", 0}},
		},
		{
			name:  "SuccessResetsFailureCount",
			steps: []brStep{failure(false), failure(false), success(false), failure(false), failure(false), is(C), failure(false), is(O)},
			want:  []wantTr{{C, O, 10 * s, "3 failures", 0}},
		},
		{
			name: "CooldownTiming",
			steps: append(open3, wait(10*s-time.Millisecond), routable(false, false), acquire(false, false), is(O),
				wait(time.Millisecond), routable(true, true), is(O), acquire(true, true), is(H)),
			want: []wantTr{{C, O, 10 * s, "", 0}, {O, H, 0, "cooldown elapsed", 10 * s}},
		},
		{
			name: "HalfOpenTrialSlotLimit",
			set:  func(b *Settings) { b.HalfOpenTrials = 2 },
			steps: append(open3, wait(10*s), acquire(true, true), routable(true, true), acquire(true, true),
				routable(false, true), acquire(false, false), release(true), routable(true, true), acquire(true, true), acquire(false, false)),
			want: []wantTr{{C, O, 10 * s, "", 0}, {O, H, 0, "", 10 * s}},
		},
		{
			name:  "HysteresisNeedsNSuccesses",
			set:   func(b *Settings) { b.Successes = 3 },
			steps: append(open3, wait(10*s), acquire(true, true), success(true), acquire(true, true), success(true), is(H), acquire(true, true), failure(true), is(O)),
			want:  []wantTr{{C, O, 10 * s, "", 0}, {O, H, 0, "", 10 * s}, {H, O, 20 * s, "trial failed: boom", 10 * s}},
		},
		{
			name: "ClosesAfterNTrialSuccesses",
			steps: append(open3, wait(10*s), acquire(true, true), success(true), is(H), acquire(true, true), success(true), is(C),
				acquire(true, false), failure(false), failure(false), is(C)),
			want: []wantTr{{C, O, 10 * s, "", 0}, {O, H, 0, "", 10 * s}, {H, C, 0, "2 trial successes in a row", 10 * s}},
		},
		{
			name: "CooldownGrowsCappedAndResetsOnClose",
			steps: append(open3,
				wait(10*s), acquire(true, true), failure(true), // 20s
				wait(20*s-1), acquire(false, false), wait(1), acquire(true, true), failure(true), // 35s (40s capped)
				wait(35*s), acquire(true, true), failure(true), // 35s
				wait(35*s), acquire(true, true), success(true), acquire(true, true), success(true), is(C),
				wait(FlapSpan*35*s), failure(false), failure(false), failure(false), is(O)), // base again
			want: []wantTr{
				{C, O, 10 * s, "", 0}, {O, H, 0, "", 10 * s}, {H, O, 20 * s, "", 10 * s},
				{O, H, 0, "", 30 * s}, {H, O, 35 * s, "", 30 * s},
				{O, H, 0, "", 65 * s}, {H, O, 35 * s, "", 65 * s},
				{O, H, 0, "", 100 * s}, {H, C, 0, "", 100 * s},
				{C, O, 10 * s, "", 240 * s},
			},
		},
		{
			// Trials pass, the traffic it gets back fails: each open soon
			// after a close doubles the cooldown it had served, capped; a
			// close that lasts FlapSpan of them forgets.
			name: "ReopeningSoonAfterClosingDoublesTheCooldown",
			steps: append(open3,
				wait(10*s), acquire(true, true), success(true), acquire(true, true), success(true), is(C), // closed at 10s
				wait(FlapSpan*10*s-1), failure(false), failure(false), failure(false), is(O), // 20s
				wait(20*s), acquire(true, true), success(true), acquire(true, true), success(true), is(C), // served 20s
				wait(FlapSpan*20*s-1), failure(false), failure(false), failure(false), is(O), // 35s (40s capped)
				wait(35*s), acquire(true, true), success(true), acquire(true, true), success(true), is(C),
				wait(FlapSpan*35*s), failure(false), failure(false), failure(false), is(O)), // forgotten: base
			want: []wantTr{
				{C, O, 10 * s, "", 0}, {O, H, 0, "", 10 * s}, {H, C, 0, "", 10 * s},
				{C, O, 20 * s, "", 50*s - 1}, {O, H, 0, "", 70*s - 1}, {H, C, 0, "", 70*s - 1},
				{C, O, 35 * s, "", 150*s - 2}, {O, H, 0, "", 185*s - 2}, {H, C, 0, "", 185*s - 2},
				{C, O, 10 * s, "", 325*s - 2},
			},
		},
		{
			name: "ReleaseFreesSlotWithoutCounting",
			set:  func(b *Settings) { b.Successes = 1 },
			steps: append(open3, wait(10*s), acquire(true, true), acquire(false, false), release(true), is(H), acquire(true, true), release(true),
				release(true), success(true), failure(true), is(H), // no trial outstanding: stale, ignored
				acquire(true, true), acquire(false, false), success(true), is(C)),
			want: []wantTr{{C, O, 10 * s, "", 0}, {O, H, 0, "", 10 * s}, {H, C, 0, "1 trial successes", 10 * s}},
		},
		{
			name: "LateNonTrialResultsIgnored",
			steps: append(open3,
				failure(false), failure(false), failure(false), success(false), is(O), // late, while open
				wait(10*s), acquire(true, true),
				success(false), failure(false), failure(false), failure(false), is(H), // late, while half-open: no trial result
				success(true), is(H), acquire(true, true), success(true), is(C)),
			want: []wantTr{{C, O, 10 * s, "", 0}, {O, H, 0, "", 10 * s}, {H, C, 0, "", 10 * s}},
		},
		{
			name: "StaleTrialResultsIgnored",
			set:  func(b *Settings) { b.HalfOpenTrials = 2 },
			steps: append(open3, wait(10*s), acquire(true, true), acquire(true, true), failure(true), is(O),
				success(true), failure(true), release(true), is(O), // the second trial, after its period ended
				wait(20*s), acquire(true, true), acquire(true, true), acquire(false, false)),
			want: []wantTr{{C, O, 10 * s, "", 0}, {O, H, 0, "", 10 * s}, {H, O, 20 * s, "", 10 * s}, {O, H, 0, "", 30 * s}},
		},
		{
			name: "NonTrialReleaseAndStaleTrialWhileClosed",
			steps: []brStep{acquire(true, false), release(false), success(true), failure(true), failure(true), failure(true), is(C),
				failure(false), failure(false), release(true), is(C)},
		},
		{
			name: "TripFromEveryState",
			steps: []brStep{trip(), is(O), wait(5 * s), trip(), wait(10*s - 1), acquire(false, false), wait(1), acquire(true, true),
				trip(), is(O), wait(20 * s), acquire(true, true)},
			want: []wantTr{{C, O, 10 * s, "lagging", 0}, {O, H, 0, "", 15 * s}, {H, O, 20 * s, "lagging", 15 * s}, {O, H, 0, "", 35 * s}},
		},
		{
			name:  "ZeroCooldownGoesHalfOpenAtOnce",
			set:   func(b *Settings) { b.Cooldown, b.MaxCooldown = 0, 0 },
			steps: append(open3, acquire(true, true), failure(true), is(O), acquire(true, true)),
			want:  []wantTr{{C, O, 0, "", 0}, {O, H, 0, "", 0}, {H, O, 0, "", 0}, {O, H, 0, "", 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := base
			if tc.set != nil {
				tc.set(&set)
			}
			clk := testutil.NewClock(testutil.Epoch)
			start := clk.Now()
			var got []Transition
			b := New(set, clk.Now, func(tr Transition) { got = append(got, tr) })
			for i, st := range tc.steps {
				where := fmt.Sprintf("step %d (%s)", i, st.do)
				switch st.do {
				case "acquire", "routable":
					var ok, trial bool
					if st.do == "acquire" {
						ok, trial = b.Acquire()
					} else {
						ok, trial = b.Routable()
					}
					if ok != st.ok || (ok && trial != st.trial) {
						t.Fatalf("%s: got ok=%v trial=%v, want ok=%v trial=%v (%+v)", where, ok, trial, st.ok, st.trial, b.Info())
					}
				case "success":
					b.Success(st.trial)
				case "failure":
					b.Failure(st.trial, "boom")
				case "release":
					b.Release(st.trial)
				case "trip":
					b.Trip("lagging 12 blocks")
				case "wait":
					clk.Advance(st.d)
				case "state":
					if s := b.State(); s != st.state {
						t.Fatalf("%s: state %s, want %s (%+v)", where, s, st.state, b.Info())
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d transitions, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.From != w.from || g.To != w.to || g.Cooldown != w.cooldown || !strings.Contains(g.Reason, w.reason) || !g.At.Equal(start.Add(w.at)) {
					t.Errorf("transition %d: got %s→%s cooldown %s at +%s %q, want %s→%s cooldown %s at +%s %q",
						i, g.From, g.To, g.Cooldown, g.At.Sub(start), g.Reason, w.from, w.to, w.cooldown, w.at, w.reason)
				}
			}
		})
	}
}

func TestBreaker_Info(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	t0 := clk.Now()
	b := New(Settings{Failures: 2, Successes: 3, HalfOpenTrials: 2, Cooldown: time.Second, MaxCooldown: time.Minute}, clk.Now, nil)
	b.Failure(false, "x")
	if in := b.Info(); in.State != Closed || in.ConsecutiveFailures != 1 || !in.OpenedAt.IsZero() || !in.NextTrialAt.IsZero() {
		t.Fatalf("closed: %+v", in)
	}
	b.Failure(false, "x")
	if in := b.Info(); in.State != Open || !in.OpenedAt.Equal(t0) || !in.NextTrialAt.Equal(t0.Add(time.Second)) || in.CurrentCooldown != time.Second || in.ReopenCount != 0 {
		t.Fatalf("open: %+v", in)
	}
	clk.Advance(time.Second)
	b.Acquire()
	b.Success(true)
	b.Acquire()
	if in := b.Info(); in.State != HalfOpen || in.ConsecutiveSuccesses != 1 || in.TrialsInFlight != 1 || !in.NextTrialAt.IsZero() {
		t.Fatalf("half-open: %+v", in)
	}
	b.Failure(true, "x")
	if in := b.Info(); in.ReopenCount != 1 || in.CurrentCooldown != 2*time.Second || !in.NextTrialAt.Equal(t0.Add(3*time.Second)) || in.TrialsInFlight != 0 {
		t.Fatalf("re-opened: %+v", in)
	}
	if got := fmt.Sprint(Closed, Open, HalfOpen); got != "closed open half-open" {
		t.Fatalf("names: %q", got)
	}
}

func TestBreaker_SettingsNormalized(t *testing.T) {
	b := New(Settings{Cooldown: time.Second}, nil, nil)
	b.Failure(false, "x") // Failures 0 means 1
	if b.State() != Open {
		t.Fatal("Failures 0 should open on the first failure")
	}
	if in := b.Info(); in.CurrentCooldown != time.Second {
		t.Fatalf("cooldown %s", in.CurrentCooldown)
	}
}

// The hook may call back into the breaker, even report to it, without
// deadlock, and still sees transitions one at a time in order.
func TestBreaker_HookMayCallBreaker(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	var b *Breaker
	var got []string
	b = New(Settings{Failures: 1, Cooldown: 0}, clk.Now, func(tr Transition) {
		got = append(got, tr.From.String()+">"+tr.To.String())
		_ = b.Info()
		if tr.To == Open && len(got) == 1 {
			if ok, trial := b.Acquire(); !ok || !trial { // open→half-open from inside the hook
				t.Errorf("acquire in hook: %v %v", ok, trial)
			}
		}
	})
	b.Failure(false, "x")
	if want := "closed>open open>half-open"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

func TestBreaker_ConcurrentUse(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	set := Settings{Failures: 3, Successes: 2, HalfOpenTrials: 2, Cooldown: 10 * time.Millisecond, MaxCooldown: 80 * time.Millisecond}
	var mu sync.Mutex
	var last State
	var n int
	var bad []string
	var b *Breaker
	b = New(set, clk.Now, func(tr Transition) {
		mu.Lock()
		defer mu.Unlock()
		if tr.From != last {
			bad = append(bad, fmt.Sprintf("transition %d from %s, previous ended in %s", n, tr.From, last))
		}
		last = tr.To
		n++
		_ = b.State()
	})
	const workers, iters = 8, 3000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range iters {
				if rng.IntN(8) == 0 {
					clk.Advance(time.Millisecond)
				}
				ok, trial := b.Acquire()
				if !ok {
					continue
				}
				if in := b.Info(); in.TrialsInFlight > set.HalfOpenTrials || in.TrialsInFlight < 0 {
					t.Errorf("trials in flight %d", in.TrialsInFlight)
					return
				}
				switch rng.IntN(3) {
				case 0:
					b.Failure(trial, "x")
				case 1:
					b.Success(trial)
				default:
					b.Release(trial)
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("hook saw transitions out of order: %v", bad[:min(len(bad), 5)])
	}
	if n == 0 {
		t.Fatal("no transitions happened; the test exercised nothing")
	}
	if last != b.State() {
		t.Fatalf("last transition ended in %s, breaker is %s", last, b.State())
	}
	if in := b.Info(); in.TrialsInFlight != 0 {
		t.Fatalf("every attempt ended, yet %d trials are in flight", in.TrialsInFlight)
	}
}

func BenchmarkBreakerClosedPath(b *testing.B) {
	br := New(Settings{Failures: 3, Cooldown: time.Second}, nil, func(Transition) {})
	b.ReportAllocs()
	for b.Loop() {
		ok, trial := br.Acquire()
		if ok {
			br.Success(trial)
		}
	}
}

func TestBreaker_OpenGateAndRevert(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	var trs []Transition
	b := New(Settings{Failures: 2, Successes: 1, Cooldown: time.Second}, clock.Now, func(tr Transition) { trs = append(trs, tr) })
	allow := false
	var asked []bool
	b.SetOpenGate(func(hard bool, why string) bool { asked = append(asked, hard); return allow || hard })

	// Refused: stays closed, and asks again at the next failure.
	b.Failure(false, "x")
	b.Failure(false, "x")
	b.Failure(false, "x")
	if b.State() != Closed || len(asked) != 2 || asked[0] {
		t.Fatalf("state %s, gate asked %v", b.State(), asked)
	}
	// Hard evidence: the gate is told, and here says yes.
	b.HardFailure(false, "connection refused")
	if b.State() != Open || !asked[2] {
		t.Fatalf("state %s after a refused connection, gate asked %v", b.State(), asked)
	}
	// Revert: opened at or after since closes again; before since, not.
	opened := clock.Now()
	clock.Advance(10 * time.Millisecond)
	b.Revert(opened.Add(time.Millisecond), "not its fault")
	if b.State() != Open {
		t.Fatal("reverted an open older than since")
	}
	b.Revert(opened, "not its fault")
	if b.State() != Closed || trs[len(trs)-1].Reason != "not its fault" {
		t.Fatalf("state %s, last transition %+v", b.State(), trs[len(trs)-1])
	}
	// Closed: its run of failures is forgotten.
	allow = true
	b.Failure(false, "x")
	b.Revert(clock.Now(), "")
	b.Failure(false, "x")
	if b.State() != Closed {
		t.Fatal("a reverted failure still counted")
	}
	// Reopened after a failed trial: a revert does not touch it.
	b.Failure(false, "x")
	clock.Advance(2 * time.Second)
	b.Acquire()
	b.Failure(true, "trial")
	b.Revert(clock.Now().Add(-time.Hour), "x")
	if b.State() != Open {
		t.Fatalf("a revert closed a breaker reopened by a failed trial: %s", b.State())
	}
}

func TestBreaker_FlapIsReportedAndARevertTakesItBack(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	var trs []Transition
	b := New(Settings{Failures: 1, Successes: 1, Cooldown: time.Second, MaxCooldown: time.Minute}, clock.Now, func(tr Transition) { trs = append(trs, tr) })
	closeAgain := func() {
		clock.Advance(b.Info().CurrentCooldown)
		if ok, trial := b.Acquire(); !ok || !trial {
			t.Fatalf("no trial after the cooldown: %+v", b.Info())
		}
		b.Success(true)
	}
	b.Failure(false, "x")
	closeAgain()
	clock.Advance(2 * time.Second)
	b.Failure(false, "x")
	last := trs[len(trs)-1]
	if last.To != Open || last.Flap != 2*time.Second || last.Cooldown != 2*time.Second || b.Info().Flaps != 1 {
		t.Fatalf("reopened 2s after closing: %+v, %+v; want a flap of 2s and a 2s cooldown", last, b.Info())
	}
	// That open was not the endpoint's doing: reverted, the flap memory is
	// as it was before it (closed at +1s after a 1s cooldown).
	b.Revert(last.At, "not its fault")
	if in := b.Info(); in.State != Closed || in.Flaps != 0 || in.CurrentCooldown != time.Second {
		t.Fatalf("after the revert: %+v", in)
	}
	clock.Advance(time.Second)
	b.Failure(false, "x")
	if last := trs[len(trs)-1]; last.Flap != 3*time.Second || last.Cooldown != 2*time.Second {
		t.Fatalf("reopened 3s after the close before the reverted open: %+v", last)
	}
	// Staying closed for FlapSpan cooldowns forgets.
	closeAgain()
	clock.Advance(FlapSpan * 2 * time.Second)
	b.Failure(false, "x")
	if last := trs[len(trs)-1]; last.Flap != 0 || last.Cooldown != time.Second || b.Info().Flaps != 0 {
		t.Fatalf("reopened %d cooldowns after closing: %+v, %+v", FlapSpan, last, b.Info())
	}
}

// An injected fault's opens are not the endpoint's: drilled three times in
// a row, each open flapped after the last close and the cooldown doubled
// (1s, 2s, 4s); forgiven when each fault ends, it is back to the base one
// and the next drill's open is no flap.
func TestBreaker_ForgiveSinceTakesBackAFaultsOpensAndTheirGrowth(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	b := New(Settings{Failures: 1, Successes: 1, Cooldown: time.Second, MaxCooldown: time.Minute}, clock.Now, nil)
	drill := func(forgive bool) Info {
		since := clock.Now()
		b.Failure(false, "fault")
		clock.Advance(b.Info().CurrentCooldown / 2)
		if forgive {
			b.ForgiveSince(since)
		}
		in := b.Info()
		clock.Advance(in.CurrentCooldown)
		if ok, trial := b.Acquire(); !ok || !trial {
			t.Fatalf("no trial after the cooldown: %+v", b.Info())
		}
		b.Success(true)
		clock.Advance(time.Second) // the next drill, soon after
		return in
	}
	var grew []time.Duration
	for range 3 {
		grew = append(grew, drill(false).CurrentCooldown)
	}
	if grew[2] != 4*time.Second {
		t.Fatalf("unforgiven, three drills in a row: cooldowns %v, want them doubling to 4s", grew)
	}
	b = New(Settings{Failures: 1, Successes: 1, Cooldown: time.Second, MaxCooldown: time.Minute}, clock.Now, nil)
	for i := range 3 {
		if in := drill(true); in.CurrentCooldown != time.Second || in.Flaps != 0 {
			t.Fatalf("drill %d, forgiven when its fault ended: %+v; want the base 1s cooldown and no flap", i+1, in)
		}
	}
	// An open from before the fault is its own: left as it is.
	b.Failure(false, "real")
	clock.Advance(time.Second / 2)
	if b.ForgiveSince(clock.Now()) || b.Info().State != Open {
		t.Fatalf("an open before the fault was forgiven: %+v", b.Info())
	}
}

// An endpoint really down since before a fault: its cooldown has grown
// through failed trials (1s, 2s, 4s -> 8s). A drill is injected, the next
// trial fails in it, the drill ends: the breaker keeps all it had before
// the fault (reset to 1s when forgiveness looked at the last reopen,
// review of stop 57), and the trial failed in the fault is the fault's:
// its doubling is taken back (a healthy endpoint's trial failed in an
// unreachable fault left it out for 2m40s after the fault was cleared).
func TestBreaker_ForgiveSinceKeepsAnOpenFromBeforeTheFault(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	b := New(Settings{Failures: 1, Successes: 1, HalfOpenTrials: 1, Cooldown: time.Second, MaxCooldown: time.Minute}, clock.Now, nil)
	b.Failure(false, "real outage")
	for range 3 {
		clock.Advance(b.Info().CurrentCooldown)
		if ok, trial := b.Acquire(); !ok || !trial {
			t.Fatalf("no trial: %+v", b.Info())
		}
		b.Failure(true, "real outage")
	}
	before := b.Info()
	t.Logf("before the fault: state %s cooldown %s reopens %d", before.State, before.CurrentCooldown, before.ReopenCount)
	since := clock.Now().Add(time.Millisecond)
	clock.Advance(before.CurrentCooldown)
	if ok, trial := b.Acquire(); !ok || !trial {
		t.Fatalf("no trial: %+v", b.Info())
	}
	b.Failure(true, "fault (endpoint down anyway)")
	in := b.Info()
	t.Logf("in the fault: state %s cooldown %s reopens %d", in.State, in.CurrentCooldown, in.ReopenCount)
	changed := b.ForgiveSince(since)
	after := b.Info()
	t.Logf("after ForgiveSince: changed=%v state %s cooldown %s reopens %d", changed, after.State, after.CurrentCooldown, after.ReopenCount)
	if after.CurrentCooldown != before.CurrentCooldown || after.ReopenCount != before.ReopenCount || !changed || after.State != Open {
		t.Errorf("after the fault: cooldown %s, %d reopens, changed %v; want what it had before the fault, %s and %d reopens, still open", after.CurrentCooldown, after.ReopenCount, changed, before.CurrentCooldown, before.ReopenCount)
	}
	if b.ForgiveSince(since) {
		t.Errorf("forgiven twice")
	}
}

// A fault cleared before it opened the breaker leaves no run of failures
// behind, and the close that ends an open it caused is no close to flap
// from: cleared 3 s into an error fault with two failures counted, one
// real failure then opened the endpoint, flapping after the close that had
// ended an earlier drill's open, with its cooldown doubled to 40 s.
func TestBreaker_AForgivenFaultLeavesNoFailuresAndNoCloseToFlapFrom(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	b := New(Settings{Failures: 3, Successes: 1, Cooldown: time.Second, MaxCooldown: time.Minute}, clock.Now, nil)
	since := clock.Now()
	b.Failure(false, "fault")
	b.Failure(false, "fault")
	b.ForgiveSince(since)
	b.Failure(false, "real")
	if in := b.Info(); in.State != Closed || in.ConsecutiveFailures != 1 {
		t.Fatalf("one real failure after a fault forgiven with two counted: %+v; want closed, 1 failure in a row", in)
	}
	// A drill opens it; forgiven, its trial closes it; a real open soon
	// after is no flap.
	since = clock.Now()
	for range 3 {
		b.Failure(false, "fault")
	}
	clock.Advance(time.Second / 2)
	b.ForgiveSince(since)
	clock.Advance(time.Second)
	if ok, trial := b.Acquire(); !ok || !trial {
		t.Fatalf("no trial: %+v", b.Info())
	}
	b.Success(true)
	clock.Advance(2 * time.Second)
	for range 3 {
		b.Failure(false, "real")
	}
	if in := b.Info(); in.State != Open || in.Flaps != 0 || in.CurrentCooldown != time.Second {
		t.Fatalf("a real open 2 s after the close that ended a forgiven open: %+v; want open with the base cooldown, no flap", in)
	}
}
