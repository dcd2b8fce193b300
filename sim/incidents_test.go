package sim

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestIncidents_ShareIsMetEvenlyAndNested(t *testing.T) {
	small := Incidents{Share: 0.01, Length: 200 * time.Millisecond, Seed: 7}
	large := Incidents{Share: 0.05, Length: 200 * time.Millisecond, Seed: 7}
	const n = 100_000
	hitSmall, hitLarge, lastHit, maxGap := 0, 0, int64(-1), int64(0)
	for k := int64(0); k < n; k++ {
		at := time.Duration(k)*small.Length + time.Millisecond
		ks, s := small.Window(at)
		_, l := large.Window(at)
		if ks != k {
			t.Fatalf("offset %s in window %d, want %d", at, ks, k)
		}
		if s && !l {
			t.Fatalf("window %d is an incident at share 0.01 but not at 0.05", k)
		}
		if s {
			hitSmall++
			if lastHit >= 0 {
				maxGap = max(maxGap, k-lastHit)
			}
			lastHit = k
		}
		if l {
			hitLarge++
		}
	}
	// A Weyl sequence's discrepancy is tiny: the share is met to a few
	// windows in 100 000, and gaps stay near 1/share (three-gap theorem).
	if math.Abs(float64(hitSmall)-0.01*n) > 5 || math.Abs(float64(hitLarge)-0.05*n) > 5 {
		t.Fatalf("incident windows %d and %d of %d, want 1000 and 5000", hitSmall, hitLarge, n)
	}
	if maxGap > 200 {
		t.Fatalf("longest gap between incidents %d windows, want near 100", maxGap)
	}
	if got := small.Count(0, n*small.Length); got != hitSmall {
		t.Fatalf("Count = %d, Window found %d", got, hitSmall)
	}
	other := Incidents{Share: 0.01, Length: 200 * time.Millisecond, Seed: 8}
	same := 0
	for k := int64(0); k < 10_000; k++ {
		_, a := small.Window(time.Duration(k) * small.Length)
		_, b := other.Window(time.Duration(k) * small.Length)
		if a && a == b {
			same++
		}
	}
	if same > 20 {
		t.Fatalf("seeds 7 and 8 share %d of about 100 incident windows", same)
	}
	if k, _ := small.Window(-time.Millisecond); k != -1 {
		t.Fatalf("1ms before the epoch is window %d, want -1", k)
	}
	if _, ok := (Incidents{}).Window(time.Second); ok {
		t.Fatal("a zero schedule has an incident")
	}
}

// Outside incident windows tails are drawn with the probability that keeps
// the overall tail share at TailProb.
func TestLatency_CorrelationKeepsTheTailShare(t *testing.T) {
	l := Latency{Median: time.Millisecond, TailProb: 0.02, TailMin: time.Second, TailMax: time.Second, Correlated: 0.5}
	if got, want := l.sharedShare(), 0.01; math.Abs(got-want) > 1e-12 {
		t.Fatalf("shared share %v, want %v", got, want)
	}
	r := rand.New(rand.NewPCG(3, 4))
	const n = 400_000
	tails := 0
	for range n {
		if _, tail := l.draw(r); tail {
			tails++
		}
	}
	overall := l.sharedShare() + (1-l.sharedShare())*float64(tails)/n
	if math.Abs(overall-0.02) > 0.001 {
		t.Fatalf("overall tail share %.4f, want 0.02", overall)
	}
	if got := (Latency{TailProb: 0.02, Correlated: 1}).independentTail(); got != 0 {
		t.Fatalf("fully correlated: independent tail %v, want 0", got)
	}
}

// With Q = 1 every tail event of every endpoint falls in the shared windows,
// and the endpoints' counters name the same windows. One manual clock drives
// three sims that share an epoch and an incident seed; each step sends one
// request to each sim.
func TestCorrelated_EveryEndpointsTailsFallInTheSameWindows(t *testing.T) {
	clock := newManualClock()
	epoch := NewEpoch(clock.Now())
	lat := Latency{TailProb: 0.1, TailMin: time.Millisecond, TailMax: time.Millisecond, Correlated: 1, Incident: 50 * time.Millisecond}
	var ups []*Upstream
	for i := range 3 {
		ups = append(ups, start(t, Config{Name: "s", Latency: lat, Seed: int64(i + 1), IncidentSeed: 5, Epoch: epoch, Clock: clock.Now}))
	}
	c := newClient(t)
	const steps, step = 400, 10 * time.Millisecond
	var want []int64
	inIncident := 0
	sched := lat.Incidents(5)
	for k := range steps {
		at := time.Duration(k) * step
		if w, ok := sched.Window(at); ok {
			inIncident++
			if !slices.Contains(want, w) {
				want = append(want, w)
			}
		}
		var wg sync.WaitGroup
		for _, u := range ups {
			wg.Go(func() { call(t, c, u, "eth_chainId") })
		}
		wg.Wait()
		clock.Advance(step)
	}
	if len(want) < 4 {
		t.Fatalf("only %d incident windows in %s: the test needs more", len(want), steps*step)
	}
	for i, u := range ups {
		got := u.Counters()
		if got.Tails != got.IncidentTails || got.IncidentTails != int64(inIncident) {
			t.Errorf("sim %d: %d tails, %d in incidents, want all %d requests sent in incident windows", i, got.Tails, got.IncidentTails, inIncident)
		}
		if !slices.Equal(got.IncidentWindows, want) {
			t.Errorf("sim %d: incident windows %v, want %v", i, got.IncidentWindows, want)
		}
	}
	// The same through the control API, as a script would read it.
	resp, err := c.Get(ups[2].URL() + "/_sim/counters")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var counters Counters
	if err := json.NewDecoder(resp.Body).Decode(&counters); err != nil || !slices.Equal(counters.IncidentWindows, want) {
		t.Fatalf("GET /_sim/counters: %v %+v", err, counters)
	}
}

func TestCorrelated_IndependentModeHasNoSharedWindows(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Latency: Latency{TailProb: 0.2, TailMin: time.Millisecond, TailMax: time.Millisecond}, Seed: 3, Clock: clock.Now})
	c := newClient(t)
	for range 100 {
		call(t, c, u, "eth_chainId")
		clock.Advance(10 * time.Millisecond)
	}
	got := u.Counters()
	if got.Tails < 5 || got.IncidentTails != 0 || len(got.IncidentWindows) != 0 {
		t.Fatalf("independent tails: %+v", got)
	}
}
