package sim

import (
	"sync"
	"testing"
	"time"
)

func TestAdmission_PacesRequestsAtCapacity(t *testing.T) {
	var a admission
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 0},            // idle: starts at once
		{0, 10 * ms},      // second at the same instant waits one slot (100/s)
		{5 * ms, 15 * ms}, // starts at 20 ms
		{50 * ms, 0},      // the queue has drained
		{300 * ms, 0},
	} {
		if got := a.wait(t0.Add(tc.at), 100); got != tc.want {
			t.Fatalf("arrival at %s waits %s, want %s", tc.at, got, tc.want)
		}
	}
	if got := a.wait(t0, 0); got != 0 {
		t.Fatalf("no capacity limit waited %s", got)
	}
}

func TestResetQueue_GivesUpTheBacklog(t *testing.T) {
	u := New(Config{Capacity: 1})
	now := time.Now()
	for range 10 {
		u.queue.wait(now, 1) // ten places: the last starts 9 s from now
	}
	if got := u.queue.wait(now, 1); got < 9*time.Second {
		t.Fatalf("backlog of 10 at 1/s: waits %s", got)
	}
	u.ResetQueue()
	if got := u.queue.wait(time.Now(), 1); got != 0 {
		t.Fatalf("after ResetQueue: waits %s", got)
	}
}

// Twenty requests at once at 50 req/s: the last cannot start before 19
// slots (380 ms) have passed, however the machine schedules them.
func TestCapacity_QueuesWhatItCannotServe(t *testing.T) {
	u := start(t, Config{Capacity: 50})
	c := newClient(t)
	begin := time.Now()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { call(t, c, u, "eth_chainId") })
	}
	wg.Wait()
	if took := time.Since(begin); took < 380*time.Millisecond {
		t.Fatalf("20 requests at 50 req/s took %s, want at least 380ms", took)
	}
	got := u.Counters()
	if got.Queued < 1 || got.QueueSeconds < 0.38 {
		t.Fatalf("queued %d for %.3fs, want the queue counted", got.Queued, got.QueueSeconds)
	}
}

func TestReseed_RepeatsAFreshUpstreamsDraws(t *testing.T) {
	l := Latency{Median: 50 * time.Millisecond, Sigma: 0.5, TailProb: 0.1, TailMin: time.Second, TailMax: 2 * time.Second}
	a := New(Config{Seed: 1, Latency: l})
	for range 10 {
		a.sampleLatency(l)
	}
	a.Reseed(9)
	b := New(Config{Seed: 9, Latency: l})
	for i := range 100 {
		if da, db := a.sampleLatency(l), b.sampleLatency(l); da != db {
			t.Fatalf("draw %d: %s after Reseed(9), %s fresh", i, da, db)
		}
	}
}
