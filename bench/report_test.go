package bench_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

func TestSummarize_QuantilesCoverOKRequestsOnly(t *testing.T) {
	res := &bench.Result{Planned: 101}
	for i := 1; i <= 100; i++ {
		res.Samples = append(res.Samples, bench.Sample{Latency: time.Duration(i) * time.Millisecond, Status: 200, Attempts: 1})
	}
	res.Samples = append(res.Samples, bench.Sample{Latency: time.Hour, Err: "timeout"})
	rep := bench.Summarize("off", res)
	if rep.Requests != 101 || rep.OK != 100 || rep.Incomplete != 1 || rep.Attempts != 100 {
		t.Fatalf("counts: %+v", rep)
	}
	// HdrHistogram at 3 significant figures: within 0.1 %.
	for _, c := range []struct{ got, want float64 }{{rep.P50, 50}, {rep.P95, 95}, {rep.P99, 99}, {rep.P999, 100}, {rep.Max, 100}} {
		if c.got < c.want || c.got > c.want*1.001 {
			t.Errorf("quantile %v, want %v", c.got, c.want)
		}
	}
}

func TestWriteTable_AlignsColumnsSideBySide(t *testing.T) {
	runs := []bench.Report{
		{Policy: "off", Requests: 3000, P50: 50.1, P95: 87.9, P99: 742.3, P999: 990.2, Max: 1001, Attempts: 3000, Amplification: 1},
		{Policy: "auto p95", HedgeDelayMS: 88.4, DelaySource: "auto", DelayMinMS: 80.1, DelayMaxMS: 95.2, Requests: 3000, P50: 50.2, P99: 140.7, Attempts: 3150, Amplification: 1.05, HedgeShare: 0.05},
	}
	preds := []bench.Prediction{{Label: "model@auto p95", DelayMS: 88.4, P50: 50, P95: 88, P99: 139.9, P999: 530}}
	var b bytes.Buffer
	if err := bench.WriteTable(&b, runs, preds); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 17 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if len([]rune(l)) != len([]rune(lines[0])) {
			t.Fatalf("ragged table:\n%s", b.String())
		}
	}
	for _, want := range []string{"model@auto p95", "88.4 auto", "80.1–95.2", "742.3", "140.7", "139.9", "1.050", "5.0%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	var p99 []string
	for _, l := range lines {
		if strings.HasPrefix(l, "p99 (ms)") {
			p99 = strings.Fields(l)
		}
	}
	if strings.Join(p99, " ") != "p99 (ms) 742.3 140.7 139.9" {
		t.Errorf("p99 row %q", p99)
	}

	b.Reset()
	if err := (&bench.Comparison{Runs: runs, Predictions: preds}).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Runs        []bench.Report
		Predictions []bench.Prediction
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != 2 || back.Runs[1].P99 != 140.7 || back.Predictions[0].P99 != 139.9 {
		t.Fatalf("JSON round trip: %s", b.String())
	}
}
