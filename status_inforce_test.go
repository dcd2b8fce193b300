package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// The pool-wide states the console shows as banners are lines of
// `rpcdash status` too, after everything else, so the summary line and the
// endpoint table keep their places; hedging paused by a guard says
// "paused", not "off" (it read "hedging off" while the queue guard held
// it, and nothing of panic routing or a slowdown).
func TestStatus_SaysWhatIsInForceAcrossThePool(t *testing.T) {
	s := engine.Snapshot{
		Endpoints:     []engine.EndpointSnapshot{{Name: "alpha", Routable: true}, {Name: "beta"}, {Name: "gamma"}},
		Routable:      1,
		Panic:         true,
		PanicReason:   "1 of 3 endpoints routable, below router.panic_threshold 0.50",
		StandbyActive: true,
		StandbyReason: "primaries routable 1 of 3, below router.panic_threshold 0.50: standby beta takes traffic",
		Slowdown: &engine.SlowdownInfo{Kind: "pool", Reason: "3 of 3 endpoints past 2x their base at once",
			Since: time.Date(2026, 12, 3, 12, 0, 1, 0, time.UTC), Excused: 7},
	}
	s.Hedge.Enabled, s.Hedge.Paused, s.Hedge.PauseReason = true, true, "most endpoints queue: medians past 2x their best recent median"
	var b bytes.Buffer
	printStatus(&b, s, 120)
	out := b.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	t.Logf("\n%s", out)
	if !strings.Contains(lines[0], "hedging paused (delay") || !strings.HasPrefix(lines[1], "ENDPOINT ") {
		t.Fatalf("summary line and table header:\n%s", out)
	}
	want := []string{
		"panic routing: 1 of 3 endpoints routable, below router.panic_threshold 0.50",
		"slowdown of the pool since 12:00:01, not charged to breakers (7 deadlines excused): 3 of 3 endpoints past 2x their base at once",
		"standby active: primaries routable 1 of 3, below router.panic_threshold 0.50: standby beta takes traffic",
		"hedging paused: most endpoints queue: medians past 2x their best recent median",
	}
	if got := lines[len(lines)-len(want):]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("last lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	calm := engine.Snapshot{Endpoints: s.Endpoints, Routable: 3}
	calm.Hedge.Enabled = true
	b.Reset()
	printStatus(&b, calm, 120)
	if out := b.String(); !strings.Contains(out, "hedging on (delay") || strings.Contains(out, "panic") || strings.Contains(out, "slowdown") ||
		strings.Contains(out, "standby") || strings.Contains(out, "paused") {
		t.Fatalf("a calm pool:\n%s", out)
	}
	calm.Hedge.Enabled = false
	b.Reset()
	printStatus(&b, calm, 120)
	if out := b.String(); !strings.Contains(out, "hedging off (delay") {
		t.Fatalf("hedging disabled:\n%s", out)
	}
}

// The summary line's count agrees with its noun: "1 requests in flight"
// was on it.
func TestStatus_SummaryLineCountsRequestsInWords(t *testing.T) {
	for n, want := range map[int64]string{0: ", 0 requests in flight,", 1: ", 1 request in flight,", 2: ", 2 requests in flight,"} {
		s := engine.Snapshot{Endpoints: []engine.EndpointSnapshot{{Name: "alpha", Routable: true}}, Routable: 1, InFlight: n}
		var b bytes.Buffer
		printStatus(&b, s, 120)
		if line, _, _ := strings.Cut(b.String(), "\n"); !strings.Contains(line, want) {
			t.Errorf("%d in flight: %q, want it to contain %q", n, line, want)
		}
	}
}

// A method's line says which of its due hedges were not sent and why, so
// that "hedging is on but not firing" has its answer in the table.
func TestStatus_MethodLineSaysWhyDueHedgesWereNotSent(t *testing.T) {
	s := engine.Snapshot{Endpoints: []engine.EndpointSnapshot{{Name: "alpha", Routable: true}}, Routable: 1, Methods: map[string]engine.MethodStatus{
		"eth_call": {AccountSnapshot: engine.AccountSnapshot{Requests: 40, HedgesRefused: map[string]int64{"queue": 8, "budget": 4}}},
		"eth_getBalance": {AccountSnapshot: engine.AccountSnapshot{Requests: 9}, Hedgeable: true,
			Hedge: &engine.MethodHedge{Enabled: true, Delay: 120 * time.Millisecond, DelaySource: "auto"}},
	}}
	var b bytes.Buffer
	printStatus(&b, s, 120)
	out := b.String()
	if !regexp.MustCompile(`(?m)^  eth_call .*; due, not sent: budget 4, queue 8$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  eth_getBalance .* delay 120ms auto$`).MatchString(out) {
		t.Fatalf("method lines:\n%s", out)
	}
}
