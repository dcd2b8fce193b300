package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestLatency_SigmaZeroIsExactlyMedian(t *testing.T) {
	l := Latency{Median: 37 * time.Millisecond}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		if d := l.Sample(r); d != l.Median {
			t.Fatalf("sample %v, want %v", d, l.Median)
		}
	}
}

func TestLatency_RequestTakesAtLeastMedian(t *testing.T) {
	u := start(t, Config{Latency: Latency{Median: 60 * time.Millisecond}})
	c := newClient(t)
	begin := time.Now()
	call(t, c, u, "eth_blockNumber")
	if took := time.Since(begin); took < 60*time.Millisecond {
		t.Fatalf("request took %v, want >= 60ms", took)
	}
}

func TestLatency_ExtraLatencyIsAdded(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	u.SetExtraLatency(80 * time.Millisecond)
	begin := time.Now()
	call(t, c, u, "eth_chainId")
	if took := time.Since(begin); took < 80*time.Millisecond {
		t.Fatalf("request took %v, want >= 80ms", took)
	}
}

func TestLatency_FixedSeedIsReproducible(t *testing.T) {
	cfg := Config{Seed: 42, Latency: Latency{Median: 50 * time.Millisecond, Sigma: 0.5, TailProb: 0.1, TailMin: time.Second, TailMax: 2 * time.Second}}
	a, b, other := New(cfg), New(cfg), New(Config{Seed: 43, Latency: cfg.Latency})
	same := true
	for i := range 200 {
		da, db, do := a.sampleLatency(cfg.Latency), b.sampleLatency(cfg.Latency), other.sampleLatency(cfg.Latency)
		if da != db {
			t.Fatalf("draw %d: %v != %v with the same seed", i, da, db)
		}
		same = same && da == do
	}
	if same {
		t.Fatal("a different seed gave the same 200 latencies")
	}
}

func TestLatency_FaultSharesDoNotShiftLatencies(t *testing.T) {
	l := Latency{Median: 50 * time.Millisecond, Sigma: 0.5}
	a, b := New(Config{Seed: 9, Latency: l}), New(Config{Seed: 9, Latency: l, ErrorRate: 0.5})
	for i := range 50 {
		b.decide(b.snapshot())
		if da, db := a.sampleLatency(l), b.sampleLatency(l); da != db {
			t.Fatalf("draw %d: %v != %v", i, da, db)
		}
	}
}

func TestLatency_LognormalMedianAndTail(t *testing.T) {
	l := Latency{Median: 50 * time.Millisecond, Sigma: 0.3, TailProb: 0.05, TailMin: 400 * time.Millisecond, TailMax: 1200 * time.Millisecond}
	r := rand.New(rand.NewPCG(7, 7))
	const n = 20000
	var body []time.Duration
	tail := 0
	for range n {
		d := l.Sample(r)
		if d >= l.TailMin {
			if d > l.TailMax {
				t.Fatalf("tail sample %v above %v", d, l.TailMax)
			}
			tail++
			continue
		}
		body = append(body, d)
	}
	if share := float64(tail) / n; share < 0.04 || share > 0.06 {
		t.Fatalf("tail share %.4f, want about 0.05", share)
	}
	slices.Sort(body)
	med := body[len(body)/2]
	if med < 48*time.Millisecond || med > 52*time.Millisecond {
		t.Fatalf("body median %v, want about 50ms", med)
	}
}
