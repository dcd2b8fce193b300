package engine_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/sim"
)

// legacyStatusKeys are the /v1/status paths and JSON kinds scripts and
// tests read since before the Snapshot became typed: they must never be
// renamed or change kind. ("[]" stands for any array element, "{}" for any
// map value.)
var legacyStatusKeys = map[string]string{
	"time": "string", "chain": "string", "in_flight": "number", "routable": "number", "max_head": "number", "max_head_lag": "number",
	"endpoints": "array", "hedge": "object", "totals": "object", "methods": "object", "warnings": "array",
	"endpoints[].name": "string", "endpoints[].url": "string", "endpoints[].provider": "string", "endpoints[].region": "string",
	"endpoints[].domain": "string", "endpoints[].routable": "bool", "endpoints[].drained": "bool",
	"endpoints[].breaker.state": "string", "endpoints[].breaker.consecutive_failures": "number",
	"endpoints[].breaker.trial_successes": "number", "endpoints[].breaker.cooldown": "string",
	"endpoints[].breaker.opened_at": "string", "endpoints[].breaker.next_trial_at": "string", "endpoints[].breaker.reopens": "number",
	"endpoints[].backoff_until": "string", "endpoints[].fault.mode": "string", "endpoints[].fault.rate": "number",
	"endpoints[].fault.latency": "string", "endpoints[].fault.duration": "string", "endpoints[].fault.since": "string",
	"endpoints[].fault.expires": "string", "endpoints[].in_flight": "number",
	"endpoints[].latency.count": "number", "endpoints[].latency.censored": "number", "endpoints[].latency.p50_ms": "number",
	"endpoints[].latency.p90_ms": "number", "endpoints[].latency.p95_ms": "number", "endpoints[].latency.p99_ms": "number",
	"endpoints[].latency.p999_ms": "number", "endpoints[].latency.max_ms": "number", "endpoints[].latency.mean_ms": "number",
	"endpoints[].rates.attempts": "number", "endpoints[].rates.successes": "number", "endpoints[].rates.failures": "number",
	"endpoints[].rates.timeouts": "number", "endpoints[].rates.rate_limited": "number", "endpoints[].rates.cancelled": "number",
	"endpoints[].rates.error_rate": "number", "endpoints[].head": "number", "endpoints[].lag": "number",
	"endpoints[].lag_excluded": "bool", "endpoints[].exclusions": "array", "endpoints[].last_error": "string",
	"endpoints[].last_error_at": "string", "endpoints[].accounting.primary": "number", "endpoints[].accounting.hedge": "number",
	"endpoints[].accounting.failover": "number", "endpoints[].accounting.failures": "number",
	"endpoints[].accounting.hedges_fired": "number", "endpoints[].accounting.hedges_won": "number",
	"endpoints[].accounting.cancelled_losers": "number", "endpoints[].accounting.loser_upstream_time": "string",
	"endpoints[].accounting.loser_upstream_seconds": "number", "endpoints[].accounting.mean_cancel_to_release": "string",
	"endpoints[].accounting.extra_cost_units": "number", "endpoints[].accounting.fire_rate": "number",
	"endpoints[].accounting.win_rate": "number", "endpoints[].accounting.amplification": "number",
	"endpoints[].methods.{}.latency.p95_ms": "number", "endpoints[].methods.{}.rates.attempts": "number",
	"endpoints[].methods.{}.attempt_timeout_ms": "number",
	"endpoints[].independence.ips":              "array", "endpoints[].independence.asns": "array", "endpoints[].independence.tls_issuer": "string",
	"endpoints[].independence.checked_at": "string",
	"hedge.enabled":                       "bool", "hedge.delay": "string", "hedge.delay_source": "string", "hedge.quantile": "number",
	"hedge.max_extra": "number", "hedge.budget": "number", "hedge.budget_tokens": "number", "hedge.paused": "bool",
	"hedge.pause_reason": "string",
	"totals.requests":    "number", "totals.primary": "number", "totals.hedges_fired": "number", "totals.amplification": "number",
	"totals.client_errors": "number",
	"methods.{}.requests":  "number", "methods.{}.primary": "number", "methods.{}.hedge": "number", "methods.{}.failover": "number",
	"methods.{}.hedges_fired": "number", "methods.{}.hedges_won": "number", "methods.{}.fire_rate": "number",
	"methods.{}.win_rate": "number", "methods.{}.amplification": "number", "methods.{}.hedge_delay": "string",
	"methods.{}.hedge_delay_source": "string", "methods.{}.hedge_delay_ms": "number", "methods.{}.hedge_enabled": "bool",
	"methods.{}.outstanding_hedges": "number", "methods.{}.outstanding_hedges_peak": "number", "methods.{}.weight": "number",
}

// paths flattens a JSON document into path → kind.
func paths(prefix string, v any, out map[string]string) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		if prefix != "" {
			out[prefix] = "object"
		}
		for k, val := range x {
			key := join(k)
			if strings.HasSuffix(prefix, "methods") {
				key = prefix + ".{}"
			}
			paths(key, val, out)
		}
	case []any:
		out[prefix] = "array"
		for _, val := range x {
			paths(prefix+"[]", val, out)
		}
	case string:
		out[prefix] = "string"
	case float64:
		out[prefix] = "number"
	case bool:
		out[prefix] = "bool"
	}
}

func TestStatusJSON_KeepsEveryLegacyFieldAndUnit(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(mustJSON(t, fullSnapshot()), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	paths("", doc, got)
	for path, kind := range legacyStatusKeys {
		if got[path] != kind {
			t.Errorf("%s: %q in the JSON, want %s", path, got[path], kind)
		}
	}
	// Units stay: milliseconds as numbers, durations as Go strings.
	if !strings.Contains(string(mustJSON(t, fullSnapshot())), `"p99_ms": 120.5`) {
		t.Errorf("p99_ms is not the milliseconds it was")
	}
}

func TestStatusJSON_RoundTrips(t *testing.T) {
	// Every field of the Snapshot, set to something non-zero, must survive
	// the wire: the attached console sees what the in-process one sees.
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		var want engine.Snapshot
		fill(reflect.ValueOf(&want).Elem(), r, 0)
		for j := range want.Endpoints {
			// An endpoint has attempts, no client requests of its own
			// (AccountSnapshot: 0 for an endpoint) nor their refused
			// hedges: the wire has no place for them.
			want.Endpoints[j].Accounting.Requests, want.Endpoints[j].Accounting.ClientErrors, want.Endpoints[j].Accounting.ClientGone = 0, 0, 0
			want.Endpoints[j].Accounting.HedgesRefused = nil
		}
		var got engine.Snapshot
		if err := json.Unmarshal(mustJSON(t, want), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			gj, wj := mustJSON(t, got), mustJSON(t, want)
			t.Fatalf("round %d: the Snapshot changed on the wire\n got %.3000s\nwant %.3000s", i, gj, wj)
		}
	}
}

// fill sets every field reachable from v to a random non-zero value that
// the wire can carry (whole microseconds, UTC instants, known enums).
func fill(v reflect.Value, r *rand.Rand, depth int) {
	switch v.Type() {
	case reflect.TypeOf(time.Time{}):
		v.Set(reflect.ValueOf(time.Unix(1_700_000_000+r.Int64N(1e6), r.Int64N(1e9)).UTC()))
		return
	case reflect.TypeOf(time.Duration(0)):
		v.SetInt(int64(time.Duration(1+r.Int64N(1e9)) * time.Microsecond))
		return
	case reflect.TypeOf(engine.BreakerState(0)):
		v.SetInt(r.Int64N(3))
		return
	case reflect.TypeOf(jsonrpc.Class(0)):
		v.SetInt(r.Int64N(3))
		return
	case reflect.TypeOf(engine.FaultMode("")):
		v.SetString(string([]engine.FaultMode{engine.FaultLatency, engine.FaultError, engine.FaultTimeout}[r.IntN(3)]))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), r, depth)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), r, depth+1)
	case reflect.Slice:
		n := 1 + r.IntN(3)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(v.Index(i), r, depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), r, depth+1)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 1 + r.IntN(3) {
			k := reflect.New(v.Type().Key()).Elem()
			fill(k, r, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, r, depth+1)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString("s" + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26))))
	case reflect.Bool:
		v.SetBool(true) // false is the zero: true shows the field is carried
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1 + r.Int64N(1e6))
	case reflect.Float64:
		v.SetFloat(float64(1+r.IntN(1e6)) / 64) // exact in binary and decimal
	default:
		panic("fill: no rule for " + v.Type().String())
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fullSnapshot is a Snapshot with every optional part present.
func fullSnapshot() engine.Snapshot {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lat := engine.LatencyStats{Count: 10, Censored: 1, P50: 40 * time.Millisecond, P90: 80 * time.Millisecond, P95: 90 * time.Millisecond,
		P99: 120500 * time.Microsecond, P999: 130 * time.Millisecond, Max: 140 * time.Millisecond, Mean: 45 * time.Millisecond}
	acct := engine.AccountSnapshot{Requests: 5, Primary: 5, LoserTime: time.Second, MeanRelease: time.Millisecond, ClientErrors: 1}
	return engine.Snapshot{Time: t0, Started: t0.Add(-time.Hour), Chain: "evm",
		Endpoints: []engine.EndpointSnapshot{{Name: "a", URL: "http://x", Provider: "p", Region: "r", Domain: "d1",
			Breaker:      engine.BreakerSnapshot{State: engine.BreakerOpen, Cooldown: 10 * time.Second, OpenedAt: t0, NextTrialAt: t0.Add(10 * time.Second)},
			BackoffUntil: t0, Fault: &engine.FaultInfo{Mode: engine.FaultLatency, Rate: 1, Latency: 500 * time.Millisecond, Duration: time.Minute, Since: t0, Expires: t0.Add(time.Minute)},
			Latency: lat, Exclusions: []string{"x"}, LastError: "HTTP 500", LastErrorAt: t0, Accounting: acct,
			Methods:      map[string]engine.MethodSnapshot{"eth_call": {Latency: lat, BackoffUntil: t0}},
			Independence: &engine.IndependenceInfo{IPs: []string{"1.2.3.4"}, ASNs: []string{"unknown"}, TLSIssuer: "O=x", CheckedAt: t0}}},
		Totals:   acct,
		Methods:  map[string]engine.MethodStatus{"eth_call": {AccountSnapshot: acct, Hedgeable: true, Hedge: &engine.MethodHedge{Enabled: true, Delay: 20 * time.Millisecond, DelaySource: "live", Outstanding: 1, OutstandingPeak: 2}}},
		Hedge:    engine.HedgeStatus{Enabled: true, PauseReason: "x"},
		Warnings: []engine.Warning{{Endpoints: []string{"a", "b"}, Reason: "ip", Text: "a and b share"}},
	}
}

// TestStatus_ServesTheSnapshotShape checks the real handler end to end.
func TestStatus_ServesTheSnapshotShape(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	code, b := h.adminDo("GET", "/v1/status", "")
	if code != 200 {
		t.Fatalf("HTTP %d", code)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	paths("", doc, got)
	for _, p := range []string{"endpoints[].breaker.state", "endpoints[].latency.p99_ms", "hedge.delay", "methods.{}.hedge_delay_ms",
		"started", "client.p99_ms", "endpoints[].series", "endpoints[].score.cost_ms", "methods.{}.class", "hedge.budget_burst"} {
		if got[p] == "" {
			t.Errorf("/v1/status lacks %s", p)
		}
	}
}

// A documented field of the status is there when its value is 0 (it
// vanished: hedge_delay_ms with delay "0s", totals.client_errors,
// latency.censored, accounting.mean_cancel_to_release were omitempty),
// and only the fields the README says are absent when none are left out.
func TestStatusJSON_DocumentedFieldsArePresentAtZero(t *testing.T) {
	s := engine.Snapshot{Chain: "evm", Endpoints: []engine.EndpointSnapshot{{Name: "a", URL: "http://x", Role: engine.RolePrimary}},
		Methods: map[string]engine.MethodStatus{
			"eth_call":               {Hedgeable: true, Hedge: &engine.MethodHedge{Enabled: true, DelaySource: "fixed"}},
			"eth_sendRawTransaction": {Class: jsonrpc.ClassWrite}}}
	var doc map[string]any
	if err := json.Unmarshal(mustJSON(t, s), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	paths("", doc, got)
	for _, p := range []string{"totals.requests", "totals.client_errors", "totals.mean_cancel_to_release",
		"endpoints[].latency.censored", "endpoints[].accounting.mean_cancel_to_release", "endpoints[].provider",
		"endpoints[].region", "endpoints[].domain", "endpoints[].exclusions", "endpoints[].last_error", "endpoints[].errors",
		"endpoints[].methods", "endpoints[].score.latency_source", "hedge.pause_reason", "panic_reason", "standby_reason",
		"warnings", "warning_details"} {
		if got[p] == "" {
			t.Errorf("%s is missing at 0", p)
		}
	}
	for _, p := range []string{"panic_worst", "slowdown", "write_affinity", "endpoints[].proxy", "endpoints[].shadow",
		"endpoints[].fault", "endpoints[].backoff_until", "endpoints[].breaker.opened_at", "endpoints[].breaker.next_trial_at",
		"endpoints[].last_error_at", "endpoints[].independence", "endpoints[].latency.lower_bounds",
		"endpoints[].accounting.requests", "endpoints[].accounting.client_errors"} {
		if got[p] != "" {
			t.Errorf("%s is shown (%s), the README says absent when none", p, got[p])
		}
	}
	hedgeFields := []string{"hedge_delay", "hedge_delay_ms", "hedge_delay_source", "hedge_enabled", "outstanding_hedges", "outstanding_hedges_peak"}
	methods := doc["methods"].(map[string]any)
	for _, f := range hedgeFields {
		if v, ok := methods["eth_call"].(map[string]any)[f]; !ok || v == nil {
			t.Errorf("methods.eth_call.%s is missing at 0 (delay 0s)", f)
		}
		if _, ok := methods["eth_sendRawTransaction"].(map[string]any)[f]; ok {
			t.Errorf("methods.eth_sendRawTransaction.%s is shown for a method never hedged", f)
		}
	}
	if ms := methods["eth_call"].(map[string]any)["hedge_delay_ms"]; ms != 0.0 {
		t.Errorf("hedge_delay_ms %v, want 0", ms)
	}
	var back engine.Snapshot
	if err := json.Unmarshal(mustJSON(t, s), &back); err != nil {
		t.Fatal(err)
	}
	if back.Methods["eth_sendRawTransaction"].Hedge != nil || back.Methods["eth_call"].Hedge == nil {
		t.Errorf("read back, a write has hedging %v, eth_call %v", back.Methods["eth_sendRawTransaction"].Hedge, back.Methods["eth_call"].Hedge)
	}
}

// Through the real port: `[hedge] delay = "0s"` shows as hedge_delay_ms 0,
// and a pool with no client error yet as totals.client_errors 0.
func TestStatus_ZeroDelayAndNoClientErrorAreShown(t *testing.T) {
	h := newHarness(t, hedgeOn("0s"), sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	_, b := h.adminDo("GET", "/v1/status", "")
	var st struct {
		Totals  map[string]any            `json:"totals"`
		Methods map[string]map[string]any `json:"methods"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if v, ok := st.Methods["eth_getBalance"]["hedge_delay_ms"]; !ok || v != 0.0 {
		t.Errorf("methods.eth_getBalance.hedge_delay_ms %v (present %v), want 0: %s", v, ok, b)
	}
	if v, ok := st.Totals["client_errors"]; !ok || v != 0.0 {
		t.Errorf("totals.client_errors %v (present %v), want 0", v, ok)
	}
}
