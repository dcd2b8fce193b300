package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A change made while censoring leaves the forecast p99 a lower bound
// (hedges cut every slow primary short: the data end before the p99)
// started a trial with predicted_p99_ms 0, "nothing to forecast from",
// which never departed, whatever clients then saw. The bound is kept,
// marked, and checked one-sidedly: measured below it by more than chance
// allows departs (faster: the distribution changed since); measured above
// it, however far, does not, a lower bound allowing it.
func TestHedgeTrial_ALowerBoundPredictionIsCheckedOneSided(t *testing.T) {
	e, clock := clockedEngine(t, 2, func(c *Config) { c.Hedge.Enabled = true })
	const method = "eth_getBalance"
	hm, _ := e.hedge.methods.get(method)
	// 1900 answers from 20 to 58 ms; the slowest 5 %, cut short by hedges
	// that won, are known only to take longer than 60-79 ms.
	for i := range 1900 {
		hm.primaries.Record(20*time.Millisecond + time.Duration(i)*20*time.Microsecond)
	}
	for i := range 100 {
		hm.primaries.RecordCensored(60*time.Millisecond + time.Duration(i)*200*time.Microsecond)
	}
	setDelay := func() HedgeTrial {
		t.Helper()
		delay := "40ms"
		if err := e.SetHedge(ActorAdmin, HedgeUpdate{Method: method, Delay: &delay}); err != nil {
			t.Fatal(err)
		}
		tr := e.trials.get(method)
		if tr == nil {
			t.Fatal("no trial")
		}
		return *tr
	}
	tr := setDelay()
	if !tr.PredictedLowerBound || tr.Predicted < 50*time.Millisecond || tr.PredictedLow != tr.Predicted || tr.PredictedHigh != 0 {
		t.Fatalf("prediction %+v: want the forecast's lower bound, marked", tr)
	}
	md, _ := e.MethodDistribution(method)
	b, _ := json.Marshal(md)
	if !strings.Contains(string(b), `"predicted_p99_lower_bound":true`) {
		t.Errorf("the wire does not say the prediction is a lower bound: %s", b)
	}
	var back MethodDistribution
	if err := json.Unmarshal(b, &back); err != nil || back.Trial == nil || !back.Trial.PredictedLowerBound {
		t.Errorf("read back: %+v, %v", back.Trial, err)
	}

	// Clients measured far below the bound: departs, faster.
	for range 1000 {
		e.trials.observe(method, 10*time.Millisecond)
	}
	if tr := *e.trials.get(method); !tr.Departs || tr.Slower() {
		t.Errorf("measured %s [%s–%s] below the bound %s: want departs, faster: %+v", tr.Measured, tr.MeasuredLow, tr.MeasuredHigh, tr.Predicted, tr)
	}

	// Far above it: a lower bound allows that.
	clock.Advance(time.Second)
	setDelay()
	for range 1000 {
		e.trials.observe(method, 900*time.Millisecond)
	}
	if tr := *e.trials.get(method); tr.Departs || tr.Slower() || tr.MeasuredHigh == 0 {
		t.Errorf("measured %s [%s–%s] above the bound %s: want the model holding: %+v", tr.Measured, tr.MeasuredLow, tr.MeasuredHigh, tr.Predicted, tr)
	}
}
