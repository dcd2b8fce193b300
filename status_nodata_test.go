package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// An endpoint that never answered (its connection refused since start:
// no latency, no head, no attempt yet) has no figures: the table prints
// "-" and the CSV leaves the cells empty, as the console prints "—". It
// printed 0.0 ms, LAG 0 and 0.0 %: a fast, synced, healthy endpoint.
func TestStatus_AFigureWithNoDataIsNoneNotZero(t *testing.T) {
	eps := []engine.EndpointSnapshot{
		{Name: "steady", Head: 100, Lag: 0, Latency: engine.LatencyStats{Count: 10, P50: 40 * time.Millisecond, P95: 45 * time.Millisecond, P99: 50 * time.Millisecond},
			Rates: engine.RateStats{Attempts: 10, Successes: 10}},
		{Name: "down", Rates: engine.RateStats{}},
	}
	var b bytes.Buffer
	printEndpointTable(&b, engine.Snapshot{Endpoints: eps}, 120)
	t.Logf("\n%s", b.String())
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if f := strings.Fields(lines[1]); strings.Join(f[3:9], " ") != "40.0 45.0 50.0 0 0.0 0.0" {
		t.Errorf("steady: want its figures, got %v", f[3:9])
	}
	if f := strings.Fields(lines[2]); strings.Join(f[3:9], " ") != "- - - - - -" {
		t.Errorf("down: want - for P50ms P95ms P99ms LAG ERR%% 429%%, got %v", f[3:9])
	}
	recs := endpointCSV(t, eps)
	r := recs[2] // ENDPOINT,PROVIDER,REGION,P50ms,P95ms,P99ms,LAG,ERR%,STATE,NOTES,429%,LOWER_BOUNDS
	if got := []string{r[3], r[4], r[5], r[6], r[7], r[10]}; strings.Join(got, ",") != ",,,,," {
		t.Errorf("down in the CSV: want empty figures, got %q", got)
	}
	if r := recs[1]; r[3] != "40.0" || r[6] != "0" || r[7] != "0.0" || r[10] != "0.0" {
		t.Errorf("steady in the CSV: %v", r)
	}
}

// An endpoint whose head has not been seen for three probe intervals (down)
// has no known lag: the table prints "-" for it, as before a head is seen,
// not the engine's carried-forward 0.
func TestStatus_ALagNoHeadWasSeenForIsNone(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	s := engine.Snapshot{Time: now, Settings: engine.Settings{ProbeInterval: 5 * time.Second}, Endpoints: []engine.EndpointSnapshot{
		{Name: "up", Head: 100, HeadSeenAt: now.Add(-4 * time.Second), Rates: engine.RateStats{Attempts: 10, Successes: 10}},
		{Name: "down", Head: 90, HeadSeenAt: now.Add(-16 * time.Second), Rates: engine.RateStats{Attempts: 10, Failures: 10, ErrorRate: 1}},
	}}
	var b bytes.Buffer
	printEndpointTable(&b, s, 120)
	t.Logf("\n%s", b.String())
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if f := strings.Fields(lines[1]); f[6] != "0" {
		t.Errorf("up: LAG %q, want 0", f[6])
	}
	if f := strings.Fields(lines[2]); f[6] != "-" {
		t.Errorf("down, no head seen for 16 s at a 5 s probe interval: LAG %q, want -", f[6])
	}
}
