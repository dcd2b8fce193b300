package bench_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// The tail-geometry seed: the model's figures are shown only in the region
// where it holds, never as a finite curve drawn through the instability. A
// duplicate at once on endpoints offered 0.7 of their capacity doubles the
// load to 1.4: the model's p99 (a duplicate slows nothing down) is then no
// forecast, and the row says so. Measured with `rpcdash bench --capacity 50
// --control-share 0.2 --rate 100`: the immediate row's model p99 read 80.9 ms
// beside a measured 730.6 ms, unmarked.
func TestModel_OutsideTheStableRegionIsMarked(t *testing.T) {
	var lat []time.Duration
	for i := range 10 {
		lat = append(lat, time.Duration(10+90*(i/9))*time.Millisecond) // 9 × 10 ms, 1 × 100 ms
	}
	offLoad, immLoad, fixLoad, zero, delay := 0.7, 0.8, 0.77, 0.0, 30.0
	ctl := &bench.Tenant{Calls: bench.Figures{N: 4}}
	c := &bench.Comparison{Rows: []bench.Row{
		bench.WithBaseline(bench.Row{Policy: "off", Kind: bench.KindOff, Calls: bench.Figures{N: 10}, OK: 10, Upstream: 10, Load: &offLoad, Control: ctl}, lat),
		// The queue guard held most duplicates back: 12 upstream requests
		// measured, where the model's 20 would offer 0.8 × 24/16 = 1.2.
		{Policy: "immediate", Kind: bench.KindImmediate, DelayMS: &zero, Calls: bench.Figures{N: 10}, OK: 10, Upstream: 12, Load: &immLoad, Control: ctl},
		// A tenth hedged: 0.77 × 15/15, stable.
		{Policy: "fixed 30ms", Kind: bench.KindFixed, DelayMS: &delay, Calls: bench.Figures{N: 10}, OK: 10, Upstream: 11, Load: &fixLoad, Control: ctl},
	}}
	c.Model()
	imm, fix := c.Rows[1], c.Rows[2]
	if imm.ModelLoad == nil || math.Abs(*imm.ModelLoad-1.2) > 1e-9 || !imm.ModelUnstable {
		t.Fatalf("immediate: model load %v, unstable %v; want 1.2, true", imm.ModelLoad, imm.ModelUnstable)
	}
	if fix.ModelLoad == nil || math.Abs(*fix.ModelLoad-0.77) > 1e-9 || fix.ModelUnstable {
		t.Fatalf("fixed: model load %v, unstable %v; want 0.77, false", fix.ModelLoad, fix.ModelUnstable)
	}
	var tb bytes.Buffer
	if err := c.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	out := tb.String()
	if !strings.Contains(out, "immediate: model p99") || !strings.Contains(out, "(1+h)·ρ = 1.20 ≥ 1") || strings.Contains(out, "fixed 30ms: model p99") {
		t.Fatalf("warnings: want one for the immediate row only:\n%s", out)
	}
	line := func(policy string) string {
		for l := range strings.Lines(out) {
			if strings.HasPrefix(l, policy+" ") && strings.Contains(l, ".") {
				return l
			}
		}
		return ""
	}
	if !strings.Contains(line("immediate"), "!") || strings.Contains(line("fixed 30ms"), "!") {
		t.Fatalf("table: the immediate row's model p99 must carry !, the fixed row's not:\n%s", out)
	}
	var cb bytes.Buffer
	if err := c.WriteCSV(&cb); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	ml, mu := slices.Index(recs[0], "model_load"), slices.Index(recs[0], "model_unstable")
	if ml != len(recs[0])-2 || mu != len(recs[0])-1 {
		t.Fatalf("CSV: model_load and model_unstable must come last (a script reads columns by position): %v", recs[0])
	}
	if v, err := strconv.ParseFloat(recs[2][ml], 64); err != nil || math.Abs(v-1.2) > 1e-9 || recs[2][mu] != "true" || recs[3][mu] != "false" || recs[1][mu] != "" {
		t.Fatalf("CSV rows: %v / %v / %v", recs[1][ml:], recs[2][ml:], recs[3][ml:])
	}
}
