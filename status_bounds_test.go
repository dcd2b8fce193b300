package main

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// A latency figure censoring leaves a lower bound (the endpoint's slow
// attempts cut short by hedges that won) reads "≥" in the table, its
// column still aligned; the CSV keeps it a number in its column and names
// it in LOWER_BOUNDS, after the table's columns.
func TestStatus_LowerBoundLatencyIsMarked(t *testing.T) {
	eps := []engine.EndpointSnapshot{
		{Name: "tailed", Latency: engine.LatencyStats{Count: 952, Censored: 48, P50: 42 * time.Millisecond, P95: 131 * time.Millisecond,
			P99: 131 * time.Millisecond, Open: [5]bool{engine.PctP95: true, engine.PctP99: true, engine.PctP999: true}}},
		{Name: "steady", Latency: engine.LatencyStats{Count: 1000, P50: 40 * time.Millisecond, P95: 90 * time.Millisecond, P99: 120 * time.Millisecond}},
	}
	var b bytes.Buffer
	printEndpointTable(&b, engine.Snapshot{Endpoints: eps}, 120)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	t.Logf("\n%s", b.String())
	if !strings.Contains(lines[1], "  42.0 ≥131.0 ≥131.0 ") || !strings.Contains(lines[2], "  40.0   90.0  120.0 ") {
		t.Errorf("table: want ≥ on tailed's p95 and p99 only, aligned:\n%s", b.String())
	}
	recs := endpointCSV(t, eps)
	if h := recs[0]; h[4] != "P95ms" || h[len(h)-1] != "LOWER_BOUNDS" {
		t.Fatalf("csv header %v", h)
	}
	if r := recs[1]; r[4] != "131.0" || r[5] != "131.0" || r[len(r)-1] != "P95ms P99ms" {
		t.Errorf("tailed %v", r)
	}
	if r := recs[2]; r[len(r)-1] != "" {
		t.Errorf("steady %v", r)
	}
}

// endpointCSV is `rpcdash status --format csv`'s records for eps, its
// header first.
func endpointCSV(t *testing.T, eps []engine.EndpointSnapshot) [][]string {
	t.Helper()
	var b bytes.Buffer
	if err := printEndpointCSV(&b, engine.Snapshot{Endpoints: eps}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
