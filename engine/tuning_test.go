package engine_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// tailSims are three like endpoints with a slow tail, so that hedges fire
// and win (and primaries are recorded censored).
func tailSims() []sim.Config { return tailSimsTimes(1) }

// tailSimsTimes is tailSims with every latency k times as long: further
// above a loaded machine's scheduling noise.
func tailSimsTimes(k time.Duration) []sim.Config {
	lat := sim.Latency{Median: k * 10 * time.Millisecond, Sigma: 0.3, TailProb: 0.08, TailMin: k * 80 * time.Millisecond, TailMax: k * 120 * time.Millisecond}
	return []sim.Config{{Latency: lat}, {Latency: lat}, {Latency: lat}}
}

// load sends n reads of eth_getBalance from 8 clients at once.
func (h *harness) load(n int) {
	h.t.Helper()
	h.loadBy(n, 8)
}

// loadBy sends n reads of eth_getBalance from the given number of clients
// at once.
func (h *harness) loadBy(n, clients int) {
	h.t.Helper()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < n; i += clients {
				mustOK(h.t, h.call(i, "eth_getBalance", addr, "latest"))
			}
		})
	}
	wg.Wait()
}

func (h *harness) getJSON(path string, v any) {
	h.t.Helper()
	code, b := h.adminDo("GET", path, "")
	if code != 200 {
		h.t.Fatalf("GET %s: HTTP %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
}

// The distribution over the admin API holds every primary, exact or
// censored; the hedge targets hold every hedge; the forecast rows carry
// exactly the fields and are the engine's Forecast of that
// distribution.
func TestTuning_DistributionAndForecastOverTheAdminAPI(t *testing.T) {
	// Three times tailSims' latencies: at 10 ms a busy machine's scheduling
	// stalls (timers late, hedges held "late") left no primary cut short
	// in 2 runs of 20, and the forecast rows out of order in 1.
	const n = 400
	h := newHarness(t, hedgeOn("auto"), tailSimsTimes(3)...)
	h.load(n)
	// A primary that rpcdash lost at least half of (and 5 ms) to its own
	// stalls is counted, not timed (timedOwnStall, ownstall.go): its
	// latency is rpcdash's. On a loaded machine 186 primaries of 13 runs
	// were so, most with no event to show for it; the distribution says
	// how many (untimed), so that every primary is accounted for.
	var md engine.MethodDistribution
	var fired int64
	accounted := testutil.Poll(5*time.Second, func() bool {
		h.getJSON("/v1/methods/eth_getBalance/distribution", &md)
		var hedges float64
		for _, tg := range md.Targets {
			hedges += tg.Weight
		}
		fired = h.status().Methods["eth_getBalance"].HedgesFired
		return md.Primary.Samples()+md.Untimed == n && int64(hedges) == fired
	})
	if !accounted {
		t.Fatalf("%d of %d primaries in the distribution and %d untimed, %d hedge targets, %d hedges fired (pool events %+v)", md.Primary.Samples(), n,
			md.Untimed, len(md.Targets), fired, poolEvents(h, "slow"))
	}
	if md.Untimed > 0 {
		t.Logf("%d of %d primaries untimed: rpcdash measured itself stalled on this loaded machine", md.Untimed, n)
	}
	p := md.Primary
	if p.Censored == 0 || len(md.Targets) == 0 {
		t.Fatalf("no censored primaries (%d) or no hedge targets (%d): the scenario did not hedge", p.Censored, len(md.Targets))
	}
	var e, c int64
	for _, b := range p.Buckets {
		e, c = e+b.Exact, c+b.Censored
	}
	if e != p.Exact || c != p.Censored || len(p.Survival) == 0 {
		t.Fatalf("buckets hold %d/%d of %d/%d; %d survival steps", e, c, p.Exact, p.Censored, len(p.Survival))
	}
	st := h.status().Methods["eth_getBalance"].Hedge
	if md.Hedge.Delay != st.Delay || md.Hedge.Source != "auto" || md.Hedge.Quantile != 0.95 || md.Hedge.MaxExtra != 1 {
		t.Fatalf("settings %+v, status %+v", md.Hedge, st)
	}

	var raw struct {
		Rows []map[string]any `json:"rows"`
	}
	h.getJSON("/v1/hedge/forecast?method=eth_getBalance&delays=150ms,270ms,auto", &raw)
	want := []string{"budget_capped", "delay_ms", "extra_load", "fire_rate", "lower_bounds", "p50_ms", "p95_ms", "p999_ms", "p99_ms", "samples"}
	for i, r := range raw.Rows {
		if got := slices.Sorted(maps.Keys(r)); !slices.Equal(got, want) {
			t.Errorf("row %d has fields %v, want %v", i, got, want)
		}
	}
	var rep engine.ForecastReport
	h.getJSON("/v1/hedge/forecast?method=eth_getBalance&delays=150ms,270ms,auto", &rep)
	// The window did not move between the two reads (no traffic): the
	// rows are the Forecast of the distribution read above.
	h.getJSON("/v1/methods/eth_getBalance/distribution", &md)
	if len(rep.Rows) != 3 || rep.Rows[0].Delay != 150*time.Millisecond || rep.Rows[1].Delay != 270*time.Millisecond {
		t.Fatalf("rows %+v", rep.Rows)
	}
	if auto := rep.Rows[2].Delay; auto != h.status().Methods["eth_getBalance"].Hedge.Delay {
		t.Errorf("the auto row's delay %s is not the auto delay in force", auto)
	}
	for _, row := range rep.Rows {
		f := engine.Forecast(engine.ForecastInput{Primary: md.Primary, Targets: md.Targets, Delay: row.Delay, MaxExtra: md.Hedge.MaxExtra,
			Budget: md.Hedge.Budget, Burst: md.Hedge.Holds(), Lag: md.Hedge.Lag})
		if f.P99 != row.P99 || f.P50 != row.P50 || math.Abs(f.FireRate-row.FireRate) > 1e-12 || f.BudgetCapped != row.BudgetCapped || row.Samples != md.Primary.Samples() {
			t.Errorf("delay %s: API %+v, Forecast %+v", row.Delay, row, f)
		}
	}
	// An earlier hedge fires more; it cuts more unless the budget caps it
	// (then only a share of the primaries past it are hedged, and on a
	// loaded machine, whose primaries are slower, 150 ms may be capped).
	// Lower bounds are not ordered so: past the horizon each row's is the
	// lower of the horizon and the low end of its own interval (a loaded
	// run read p99 ≥30.1 ms at 50 ms beside ≥21.9 ms at 90 ms, both true).
	bounds := rep.Rows[0].Open[2] || rep.Rows[1].Open[2]
	if rep.Rows[0].FireRate < rep.Rows[1].FireRate || rep.Rows[1].P99 < rep.Rows[0].P99 && !rep.Rows[0].BudgetCapped && !bounds {
		t.Errorf("an earlier hedge should fire more and, unless capped, cut more: %+v", rep.Rows)
	}
	// "off" is the unhedged baseline: no hedge fires, and its p99 is the
	// primaries' own, never below a hedged row's unless a lower bound.
	h.getJSON("/v1/hedge/forecast?method=eth_getBalance&delays=off,current", &rep)
	if off, cur := rep.Rows[0], rep.Rows[1]; off.FireRate != 0 || off.ExtraLoad != 0 || off.Delay != 0 || off.P99 < cur.P99 && !off.Open[2] {
		t.Errorf("off %+v beside current %+v", off, cur)
	}
	if code, b := h.adminDo("GET", "/v1/hedge/forecast?method=eth_getBalance&delays=never", ""); code != 400 || !strings.Contains(string(b), "current or off") {
		t.Errorf("a delay that is none: HTTP %d %s", code, b)
	}
	// No delays: the default candidates (README: current, auto:0.8,
	// auto:0.9, auto:0.95, auto:0.99).
	h.getJSON("/v1/hedge/forecast?method=eth_getBalance", &rep)
	if len(rep.Rows) != 5 {
		t.Errorf("default rows: %d", len(rep.Rows))
	}
}

// A live change of one method's hedging is logged with the forecast it
// was made on, and from then on the distribution carries the prediction
// beside what clients have seen since, counted request by request.
func TestTuning_ChangeStartsATrialOfTheForecast(t *testing.T) {
	t.Parallel()
	// Independent endpoints: the model holds within its confidence
	// (TestTuning_TrialDepartsWhenEndpointsShareFate is the contrast).
	// Measured wholly below the forecast's interval: the endpoints were
	// quicker in the trial than in the phase the forecast was made from (a
	// machine less loaded), the opposite of the departure a shared fate
	// makes. Seen once in about 70 full runs: predicted 326 ms [160, 362],
	// measured 133 ms [130, 150], this process stalled 31 ms. Three such
	// tries in a row still fail.
	quickerSince := func(tr *engine.HedgeTrial) string {
		if tr.Departs && bounded(tr) && tr.MeasuredHigh < tr.PredictedLow {
			return fmt.Sprintf("measured %s [%s, %s], below the forecast's interval from %s: the endpoints were quicker in the trial than in the forecast's latencies",
				tr.Measured, tr.MeasuredLow, tr.MeasuredHigh, tr.PredictedLow)
		}
		return ""
	}
	untilUnstalledTrialVoiding(t, trialOfTheForecast, func(tr *engine.HedgeTrial) bool { return bounded(tr) && !tr.Departs }, quickerSince,
		"independent endpoints, yet the prediction is outside its interval or the trial departs from it")
}

// bounded says whether the forecast p99 lies within its interval. A
// machine's stall may make a slowdown of the whole pool, whose answers,
// the primaries' among them, are forgotten once the pool is back: the
// forecast then rests on too few to have one ([0, 0]), and the try is
// judged with the others, not failed on the spot while a retry passes.
func bounded(tr *engine.HedgeTrial) bool {
	return 0 < tr.PredictedLow && tr.PredictedLow <= tr.Predicted && tr.Predicted <= tr.PredictedHigh
}

// A forecast the budget caps is its steady state; a trial begins with what
// the budget has saved, which hedges every request that wants it first.
// The trial's interval reaches down to the uncapped p99: judged by the
// capped one alone, 8 % of answers slow against a budget of 5 % departed
// at once (measured about 140 ms, predicted above 250) while the model
// held.
func TestTuning_ACappedForecastsTrialCountsWhatTheBudgetSaved(t *testing.T) {
	t.Parallel()
	capped := func(t *testing.T) *engine.HedgeTrial {
		return trialOfTheForecastWith(t, func(c *engine.Config) { c.Hedge.Budget = 0.05 })
	}
	// A budget of 5 % for 8 % of answers in the tail caps the forecast
	// p99 in the tail (above 200 ms); the interval reaches down to the
	// uncapped one (below it), and the trial stays within.
	holds := func(tr *engine.HedgeTrial) bool {
		return bounded(tr) && tr.Predicted >= 200*time.Millisecond && tr.PredictedLow < 200*time.Millisecond && !tr.Departs
	}
	// Measured below the interval's lower end, which is the uncapped
	// forecast (every slow request hedged), while the interval reaches down
	// as it should: clients saw better than hedging everything could give
	// on the forecast's latencies, so the endpoints were quicker in the
	// trial than when they were taken (a machine less loaded). Seen once
	// in 36 CI runs: predicted 348 ms [150, 376], measured 138 ms [129,
	// 143], this process stalled 39 ms.
	quickerSince := func(tr *engine.HedgeTrial) string {
		if tr.Departs && tr.MeasuredHigh < tr.PredictedLow && tr.PredictedLow < 200*time.Millisecond && bounded(tr) && tr.Predicted >= 200*time.Millisecond {
			return fmt.Sprintf("measured %s [%s, %s], below even the uncapped forecast's %s: the endpoints were quicker in the trial than in the forecast's latencies",
				tr.Measured, tr.MeasuredLow, tr.MeasuredHigh, tr.PredictedLow)
		}
		return ""
	}
	untilUnstalledTrialVoiding(t, capped, holds, quickerSince, "a capped forecast without the uncapped p99 in its interval, or a trial departing from it")
}

// trialOfTheForecast changes eth_getBalance's hedging after an unhedged
// phase and returns the trial after 600 requests.
func trialOfTheForecast(t *testing.T) *engine.HedgeTrial {
	return trialOfTheForecastWith(t, nil)
}

// trialOfTheForecastWith is trialOfTheForecast with the config changed by mut.
func trialOfTheForecastWith(t *testing.T, mut func(*engine.Config)) *engine.HedgeTrial {
	// Three times the latencies of tailSims: at 10 ms, beside three busy
	// loops, the unhedged phase's scheduling stalls predicted a p99 of
	// 105 ms that the trial measured at 55 ms (departs).
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("auto")(c)
		if mut != nil {
			mut(c)
		}
	}, tailSimsTimes(3)...)
	// Unhedged primaries, none cut short, so that the data reach past the
	// p99 and the forecast can bound it (hedged at auto, the tail past the
	// delay is mostly censored and the p99 may be only a lower bound: then
	// no prediction is made, rightly).
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"method":"eth_getBalance","enabled":false}`); code != 200 {
		t.Fatalf("HTTP %d %s", code, b)
	}
	h.load(500) // enough primaries to bound the predicted p99
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"method":"eth_getBalance","enabled":true,"delay":"90ms"}`); code != 200 {
		t.Fatalf("HTTP %d %s", code, b)
	}
	evs := h.events()
	last := evs[len(evs)-1]
	if last.Actor != engine.ActorAdmin || !containsAll(last.Message, "eth_getBalance", "delay=90ms", "forecast p99", "fire") {
		t.Fatalf("event %+v", last)
	}
	var md engine.MethodDistribution
	h.getJSON("/v1/methods/eth_getBalance/distribution", &md)
	tr := md.Trial
	if tr == nil || tr.Delay != 90*time.Millisecond || tr.DelaySource != "live" || tr.Predicted <= 0 || tr.Samples != 0 {
		t.Fatalf("trial %+v", tr)
	}
	h.load(100)
	h.getJSON("/v1/methods/eth_getBalance/distribution", &md)
	if tr := md.Trial; tr.Samples != 100 || tr.Measured <= 0 || tr.MeasuredHigh != 0 {
		t.Fatalf("after 100 requests: %+v (too few to bound a p99)", tr)
	}
	h.load(500)
	h.getJSON("/v1/methods/eth_getBalance/distribution", &md)
	tr = md.Trial
	if tr.Samples != 600 || !(tr.MeasuredLow <= tr.Measured && tr.Measured <= tr.MeasuredHigh && tr.MeasuredLow > 0) {
		t.Fatalf("after 600 requests: %+v", tr)
	}
	return tr
}

// Bad input gets a 400 naming the field, and never creates state.
func TestTuning_AdminRefusesBadInput(t *testing.T) {
	h := newHarness(t, hedgeOn("auto"), sim.Config{}, sim.Config{})
	long := strings.Repeat("50ms,", 33)
	for path, want := range map[string]string{
		"/v1/methods/eth_sendRawTransaction/distribution":        "never hedged",
		"/v1/methods/" + url.PathEscape("a b") + "/distribution": "method",
		"/v1/hedge/forecast":                                         "method: required",
		"/v1/hedge/forecast?method=eth_call&delays=abc":              "delays",
		"/v1/hedge/forecast?method=eth_call&delays=auto:2":           "delays",
		"/v1/hedge/forecast?method=eth_call&delays=-5ms":             "delays",
		"/v1/hedge/forecast?method=eth_call&delays=1h":               "request_timeout",
		"/v1/hedge/forecast?method=eth_call&delays=" + long:          "at most",
		"/v1/hedge/forecast?method=eth_call&method=eth_getBalance":   "one method",
		"/v1/hedge/forecast?method=eth_sendRawTransaction&delays=1s": "never hedged",
	} {
		code, b := h.adminDo("GET", path, "")
		var e struct{ Error string }
		_ = json.Unmarshal(b, &e)
		if code != 400 || !strings.Contains(e.Error, want) {
			t.Errorf("%s: HTTP %d %q, want 400 naming %q", path, code, e.Error, want)
		}
	}
	// A hedgeable method nobody has called: an empty distribution, and a
	// forecast that says it has nothing to go on.
	var md engine.MethodDistribution
	h.getJSON("/v1/methods/eth_getCode/distribution", &md)
	if md.Primary.Samples() != 0 || md.Hedge.Source != "cold" {
		t.Errorf("unseen method: %+v", md)
	}
	var rep engine.ForecastReport
	h.getJSON("/v1/hedge/forecast?method=eth_getCode&delays=50ms", &rep)
	if len(rep.Rows) != 1 || rep.Rows[0].Samples != 0 || len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "nothing to forecast") {
		t.Errorf("unseen method: %+v", rep)
	}
	if _, ok := h.status().Methods["eth_getCode"]; ok {
		t.Error("asking about a method created state for it")
	}
}

// The JSON documents read back to what the engine returned.
func TestTuning_JSONRoundTrips(t *testing.T) {
	ms := time.Millisecond
	d := engine.Distribution{Exact: 3, Censored: 1,
		Buckets:  []engine.DistBucket{{Low: 10 * ms, High: 10*ms + 63*time.Microsecond, Exact: 2}, {Low: 40 * ms, High: 40*ms + 255*time.Microsecond, Exact: 1, Censored: 1}},
		Survival: []engine.SurvivalStep{{At: 10*ms + 63*time.Microsecond, S: 0.5}, {At: 40*ms + 255*time.Microsecond, S: 0.25}}}
	md := engine.MethodDistribution{Method: "eth_call", Window: 5 * time.Minute, Primary: d,
		Targets: []engine.HedgeTarget{{Endpoint: "a", Weight: 7, Dist: d}},
		Hedge:   engine.MethodHedgeSettings{Enabled: true, Delay: 87 * ms, Source: "auto", Quantile: 0.95, MaxExtra: 1, Budget: 0.1, BudgetBurst: 10},
		Trial: &engine.HedgeTrial{Since: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Enabled: true, Delay: 120 * ms, DelaySource: "live",
			Predicted: 140 * ms, PredictedLow: 130 * ms, PredictedHigh: 150 * ms, Measured: 145 * ms, MeasuredLow: 131 * ms, MeasuredHigh: 160 * ms, Samples: 900}}
	b, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	var back engine.MethodDistribution
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, md) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, md)
	}
	rep := engine.ForecastReport{Method: "eth_call", Notes: []string{"x"}, Rows: []engine.HedgeForecast{{Delay: 90 * ms, FireRate: 0.05, ExtraLoad: 0.05,
		P50: 50 * ms, P95: 88 * ms, P99: 140 * ms, P999: 170 * ms, BudgetCapped: true, Samples: 1000}, {Delay: 120 * ms,
		P50: 50 * ms, P95: 88 * ms, P99: 133 * ms, P999: 133 * ms, Open: [4]bool{false, false, true, true}, Samples: 1000}}}
	b, _ = json.Marshal(rep)
	var rback engine.ForecastReport
	if err := json.Unmarshal(b, &rback); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rback, rep) {
		t.Errorf("round trip:\n got %+v\nwant %+v", rback, rep)
	}
	// The lower bounds are named on the wire, [] when none (an attached
	// console drew them as exact figures).
	if !strings.Contains(string(b), `"lower_bounds":[]`) || !strings.Contains(string(b), `"lower_bounds":["p99_ms","p999_ms"]`) {
		t.Errorf("wire: %s", b)
	}
}

// Endpoints that are slow together (every tail event shared, sim's
// correlated incidents): the model, which assumes independence, predicts
// that hedging cuts the tail; clients see it does not, and once enough
// requests bound the measured p99 the trial says the measurement departs
// from the prediction.
func TestTuning_TrialDepartsWhenEndpointsShareFate(t *testing.T) {
	t.Parallel()
	// Above the prediction's interval, as a shared cause departs. Twice
	// the prediction was asked before: a loaded CI's noise widened the
	// primaries' body and the prediction with them (222 ms beside a
	// measured 324 ms, against 67 and 283 idle), though the trial departed.
	// A try whose prediction reaches into the shared tail (its interval
	// past 500 ms: the budget capping the model's hedges there, or too few
	// primaries past the p99) cannot show a departure: it is void. Seen in
	// 8 of 18 CI runs with 800 primaries, and in 1 of 3 with 1600
	// (predicted 770 ms [273, 924]).
	untilJudged(t, func(int) string {
		var tr *engine.HedgeTrial
		untilUnstalledTrial(t, func(t *testing.T) *engine.HedgeTrial { tr = trialOfSharedFate(t); return tr }, func(tr *engine.HedgeTrial) bool {
			return tr.PredictedHigh >= 500*time.Millisecond || tr.Departs && tr.Slower()
		}, "shared incidents: the trial should depart above the independent model's prediction")
		if tr.PredictedHigh < 500*time.Millisecond {
			return ""
		}
		return fmt.Sprintf("the prediction %s [%s, %s] reaches into the shared tail: no departure can be shown", tr.Predicted, tr.PredictedLow, tr.PredictedHigh)
	})
}

// trialOfSharedFate returns the trial of the auto delay set after 1600
// requests to endpoints whose tails are shared, after 1200 more.
func trialOfSharedFate(t *testing.T) *engine.HedgeTrial {
	// Latencies large enough that a loaded machine's scheduling noise (and
	// -race) stays small beside them: at a 10 ms median the noise alone
	// moved the measured p99 on a busy 2-core machine. Incidents take 14 %
	// of the time: 8 clients at a time send few requests while every
	// answer is slow, and at 8 % the requests that met one were about 1 %,
	// the measured p99 on the edge of the tail (its interval reached down
	// to the body, 55 ms, under 3 busy loops: no departure, 1 run in 4).
	// Three times the latencies first written (a 30 ms median, tails of
	// 240-360 ms in windows of 180 ms), with the same shares and as many
	// windows over the run: beside 4 busy loops the noise alone took the
	// body's p99 near 300 ms, the independent model's prediction rose
	// into the shared tail with it (302 ms beside a measured 317) and 3
	// runs in 10 gave up, too loaded to conclude.
	sc := sim.Scenario{Endpoints: 3, Seed: 4, Latency: sim.Latency{Median: 90 * time.Millisecond, Sigma: 0.2, TailProb: 0.14,
		TailMin: 720 * time.Millisecond, TailMax: 1080 * time.Millisecond, Correlated: 1, Incident: 540 * time.Millisecond}}
	h := newHarness(t, hedgeOn("auto"), sc.Configs(sim.NewEpoch(time.Now()))...)
	// 1600 primaries before the change: after 800 the prediction's
	// interval reached up into the shared tail in 8 of 18 CI runs (to
	// 750-900 ms, beside a measured 864-1012), no departure; after 1600
	// it ended at 255-262 ms in 8 of 9 runs.
	h.load(1600)
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"method":"eth_getBalance","delay":"auto"}`); code != 200 {
		t.Fatalf("HTTP %d %s", code, b)
	}
	h.load(1200)
	var md engine.MethodDistribution
	h.getJSON("/v1/methods/eth_getBalance/distribution", &md)
	return md.Trial
}

// untilUnstalledTrial runs a trial scenario and asserts holds on its
// result. The forecast is made from one period's latencies and measured
// against the next one's, so a stall of this process in one period and not
// the other (a loaded machine) moves one side alone: the scenario runs
// again, up to three times in all, when the assertion fails and the test
// process stalled 50 ms or more meanwhile.
func untilUnstalledTrial(t *testing.T, scenario func(*testing.T) *engine.HedgeTrial, holds func(*engine.HedgeTrial) bool, what string) {
	t.Helper()
	untilUnstalledTrialVoiding(t, scenario, holds, nil, what)
}

// untilUnstalledTrialVoiding is untilUnstalledTrial whose tries are also
// void when void (if not nil) says why the scenario was not set up.
func untilUnstalledTrialVoiding(t *testing.T, scenario func(*testing.T) *engine.HedgeTrial, holds func(*engine.HedgeTrial) bool, void func(*engine.HedgeTrial) string, what string) {
	t.Helper()
	untilJudged(t, func(try int) string {
		w := testutil.WatchStalls(t)
		tr := scenario(t)
		stall := w.Stop()
		t.Logf("try %d: predicted p99 %s [%s, %s], measured %s [%s, %s] over %d, departs %v; longest stall of this process %s",
			try, tr.Predicted, tr.PredictedLow, tr.PredictedHigh, tr.Measured, tr.MeasuredLow, tr.MeasuredHigh, tr.Samples, tr.Departs, stall)
		if holds(tr) {
			return ""
		}
		if void != nil {
			if why := void(tr); why != "" {
				return why
			}
		}
		if stall < 50*time.Millisecond {
			t.Fatalf("%s: %+v", what, tr)
		}
		return fmt.Sprintf("%s, and this process stalled %s: %+v", what, stall, tr)
	})
}

// The distribution's hedge budget fields are the status's: budget_burst the
// configured burst, budget_cap what the budget may hold now.
func TestTuning_DistributionBudgetFieldsMatchTheStatus(t *testing.T) {
	h := newHarness(t, hedgeOn("auto"), sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	h.load(30) // 30 reads deposit 3 units: the cap is the burst 10 plus 3
	var st struct {
		Hedge map[string]any `json:"hedge"`
	}
	var md struct {
		Hedge map[string]any `json:"hedge"`
	}
	h.getJSON("/v1/methods/eth_getBalance/distribution", &md)
	h.getJSON("/v1/status", &st)
	t.Logf("status budget_burst %v budget_cap %v; distribution budget_burst %v budget_cap %v",
		st.Hedge["budget_burst"], st.Hedge["budget_cap"], md.Hedge["budget_burst"], md.Hedge["budget_cap"])
	if md.Hedge["budget_burst"] != st.Hedge["budget_burst"] || md.Hedge["budget_burst"] != 10.0 {
		t.Errorf("distribution budget_burst %v, status %v, want the configured 10", md.Hedge["budget_burst"], st.Hedge["budget_burst"])
	}
	if md.Hedge["budget_cap"] != st.Hedge["budget_cap"] || st.Hedge["budget_cap"].(float64) <= 10 {
		t.Errorf("distribution budget_cap %v, status %v, want the same, above the burst", md.Hedge["budget_cap"], st.Hedge["budget_cap"])
	}
}

// The distribution's untimed count goes over the wire and back, as an
// attached console reads it.
func TestTuning_UntimedPrimariesGoOverTheWire(t *testing.T) {
	b, err := json.Marshal(engine.MethodDistribution{Method: "eth_call", Untimed: 7})
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var back engine.MethodDistribution
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if raw["untimed"] != float64(7) || back.Untimed != 7 {
		t.Fatalf("wire %s: untimed %v, read back %d; want 7", b, raw["untimed"], back.Untimed)
	}
}
