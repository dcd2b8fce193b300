package engine_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func validBase() engine.Config {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	return c
}

// Every numeric and duration key has its natural range: a value outside it
// (NaN and the infinities TOML allows included) is an error naming the key
// and the value.
func TestConfig_OutOfRangeValuesNameKeyAndValue(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*engine.Config)
		want string
	}{
		{"negative lag_penalty", func(c *engine.Config) { c.Router.LagPenalty = -time.Millisecond }, "router.lag_penalty: must not be negative (0 ignores head lag in the cost), got -1ms"},
		{"hedge delay above request_timeout", func(c *engine.Config) { c.Hedge.Delay = "11s" }, "hedge.delay: 11s is above server.request_timeout (10s): the hedge would never fire"},
		{"method delay above request_timeout", func(c *engine.Config) {
			c.Hedge.Methods = map[string]engine.HedgeMethodConfig{"eth_call": {Delay: "11s"}}
		}, "hedge.methods.eth_call.delay: 11s is above server.request_timeout (10s)"},
		// A method with its own request deadline is held to it, not the general one.
		{"trace delay above its own deadline", func(c *engine.Config) {
			c.Hedge.Methods = map[string]engine.HedgeMethodConfig{"debug_tracetransaction": {Delay: "61s"}}
		}, "hedge.methods.debug_tracetransaction.delay: 1m1s is above debug_tracetransaction's request deadline (1m0s): the hedge would never fire"},
		{"method delay above its methods.timeouts", func(c *engine.Config) {
			c.Methods.Timeouts = map[string]time.Duration{"eth_call": 2 * time.Second}
			c.Hedge.Methods = map[string]engine.HedgeMethodConfig{"eth_call": {Delay: "3s"}}
		}, "hedge.methods.eth_call.delay: 3s is above eth_call's request deadline (2s)"},
		{"attempt_timeout_min above request_timeout", func(c *engine.Config) { c.Breaker.AttemptTimeoutMin = 11 * time.Second }, "breaker.attempt_timeout_min: 11s is above server.request_timeout (10s)"},
		{"NaN quantile", func(c *engine.Config) { c.Hedge.Quantile = math.NaN() }, "hedge.quantile: must be in (0, 1), got NaN"},
		{"infinite budget_burst", func(c *engine.Config) { c.Hedge.BudgetBurst = math.Inf(1) }, "hedge.budget_burst: must be in [1, ∞), got +Inf"},
		{"NaN pause_error_rate", func(c *engine.Config) { c.Hedge.PauseErrorRate = math.NaN() }, "hedge.pause_error_rate: must be in (0, 1], got NaN"},
		{"pause_latency_ratio near 1", func(c *engine.Config) { c.Hedge.PauseLatencyRatio = 1.2 }, "hedge.pause_latency_ratio: must be 0 (off) or in [1.5, 100], got 1.2"},
		{"NaN pause_latency_ratio", func(c *engine.Config) { c.Hedge.PauseLatencyRatio = math.NaN() }, "hedge.pause_latency_ratio: must be 0 (off) or in [1.5, 100], got NaN"},
		{"NaN tolerance", func(c *engine.Config) { c.Router.Tolerance = math.NaN() }, "router.tolerance: must be in [0, ∞), got NaN"},
		{"infinite error_penalty", func(c *engine.Config) { c.Router.ErrorPenalty = math.Inf(1) }, "router.error_penalty: must be in [0, ∞), got +Inf"},
		{"NaN attempt_timeout_factor", func(c *engine.Config) { c.Breaker.AttemptTimeoutFactor = math.NaN() }, "breaker.attempt_timeout_factor: must be in [1, ∞), got NaN"},
		{"NaN demo rate", func(c *engine.Config) { c.Demo.Rate = math.NaN() }, "demo.rate: must be in (0, 200], got NaN"},
		{"infinite weight", func(c *engine.Config) { c.Methods.Weights = map[string]float64{"eth_call": math.Inf(1)} }, "methods.weights.eth_call: must be in (0, ∞), got +Inf"},
		{"negative failures shows the value", func(c *engine.Config) { c.Breaker.Failures = -1 }, "breaker.failures: must be at least 1, got -1"},
		{"negative max_head_lag shows the value", func(c *engine.Config) { c.Chain.MaxHeadLag = -3 }, "chain.max_head_lag: must be from 0 to 1000000000, got -3"},
		// head + lag wrapped and put every endpoint "ahead".
		{"max_head_lag at the top of int64", func(c *engine.Config) { c.Chain.MaxHeadLag = math.MaxInt64 }, "chain.max_head_lag: must be from 0 to 1000000000, got 9223372036854775807"},
		{"promote_match_rate above 1", func(c *engine.Config) { c.Router.PromoteMatchRate = 1.5 }, "router.promote_match_rate: must be in [0, 1], got 1.5"},
		{"NaN promote_match_rate", func(c *engine.Config) { c.Router.PromoteMatchRate = math.NaN() }, "router.promote_match_rate: must be in [0, 1], got NaN"},
		{"negative write_affinity", func(c *engine.Config) { c.Router.WriteAffinity = -time.Second }, "router.write_affinity: must not be negative (0s turns write affinity off), got -1s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validBase()
			tc.mut(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v\nwant a line containing %q", err, tc.want)
			}
		})
	}
	c := validBase()
	c.Router.LagPenalty = 0    // lag left out of the cost is a choice
	c.Hedge.Delay = "10s"      // the request's deadline itself is still allowed
	c.Router.WriteAffinity = 0 // write affinity off is a choice
	if err := c.Validate(); err != nil {
		t.Errorf("edge values refused: %v", err)
	}
}

// hedge.delay in the config and PUT /v1/hedge follow one rule with one
// wording: a fixed delay above server.request_timeout is refused by both.
func TestConfig_HedgeDelayRuleMatchesTheAdminAPI(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	code, body := h.adminDo("PUT", "/v1/hedge", `{"delay":"6s"}`)
	if code != 400 {
		t.Fatalf("PUT /v1/hedge delay 6s (request_timeout 5s): HTTP %d %s, want 400", code, body)
	}
	c := baseConfig()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	c.Hedge.Delay = "6s"
	err := c.Validate()
	const rule = "6s is above server.request_timeout (5s): the hedge would never fire"
	if err == nil || !strings.Contains(err.Error(), "hedge.delay: "+rule) {
		t.Errorf("config hedge.delay 6s: %v, want %q", err, "hedge.delay: "+rule)
	}
	if !strings.Contains(string(body), rule) {
		t.Errorf("admin API: %s, want %q", body, rule)
	}
	// A trace's delay is held to its own 60 s deadline.
	if code, body := h.adminDo("PUT", "/v1/hedge", `{"method":"debug_traceTransaction","delay":"6s"}`); code != 200 {
		t.Errorf("PUT /v1/hedge debug_traceTransaction delay 6s: HTTP %d %s, want 200", code, body)
	}
	if code, body := h.adminDo("PUT", "/v1/hedge", `{"method":"debug_traceTransaction","delay":"61s"}`); code != 400 || !strings.Contains(string(body), "is above debug_traceTransaction's request deadline (1m0s)") {
		t.Errorf("PUT /v1/hedge debug_traceTransaction delay 61s: HTTP %d %s, want 400 naming its deadline", code, body)
	}
}

// The demo's mix is read only when the demo is on; the default mix drops
// the methods [methods] moved out of the reads instead of failing, and an
// explicit mix naming one is still an error.
func TestConfig_DemoMixCheckedOnlyWhenTheDemoRuns(t *testing.T) {
	cases := []struct {
		name    string
		mut     func(*engine.Config)
		wantErr string
	}{
		{"demo off, default mix, eth_blockNumber a write", func(c *engine.Config) { c.Methods.Writes = []string{"eth_blockNumber"} }, ""},
		{"demo off, default mix, eth_getBalance stateful", func(c *engine.Config) { c.Methods.Stateful = []string{"eth_getBalance"} }, ""},
		{"demo off, explicit mix with a write", func(c *engine.Config) { c.Demo.Mix = []string{"eth_sendRawTransaction"} }, ""},
		{"demo on, default mix, eth_blockNumber a write", func(c *engine.Config) {
			c.Demo.Enabled = true
			c.Methods.Writes = []string{"eth_blockNumber"}
		}, ""},
		{"demo on, explicit mix names a reclassified method", func(c *engine.Config) {
			c.Demo.Enabled, c.Demo.Mix = true, []string{"eth_blockNumber:3"}
			c.Methods.Writes = []string{"eth_blockNumber"}
		}, "demo.mix: \"eth_blockNumber:3\": the demo sends reads only"},
		{"demo on, every default read reclassified", func(c *engine.Config) {
			c.Demo.Enabled = true
			c.Methods.Writes = []string{"eth_blockNumber", "eth_getBalance", "eth_call", "eth_getTransactionCount", "eth_getBlockByNumber"}
		}, "demo.mix: [methods] reclassifies every read of the default mix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validBase()
			tc.mut(&c)
			err := c.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Validate: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// A probe loop sends its next probe as soon as the last one ended and the
// interval passed, so probes.interval "1ns" probed every endpoint back to
// back (186 probes in 4 s to a 20 ms sim, against 6 at the default), and
// probes.independence_interval "1ns" kept half a core busy re-resolving
// the pool; a cooldown near the top of time.Duration's range overflowed
// when a failed trial doubled it. Each such value is refused naming the
// key, the range and the value, and the ends of each range are accepted.
// server.read_timeout or write_timeout "1ns" left rpcdash listening and
// dropping every request on both ports (curl: 0 bytes, HTTP 000); the byte
// bounds at the top of int64 wrapped, refusing every request or answer.
func TestConfig_ProbeBreakerAndClientDurationsHaveFloorsAndCeilings(t *testing.T) {
	huge := time.Duration(math.MaxInt64)
	cases := []struct {
		name string
		mut  func(*engine.Config)
		want string
	}{
		{"probe interval 1ns", func(c *engine.Config) { c.Probes.Interval = time.Nanosecond },
			"probes.interval: must be a duration from 10ms to 24h (probes run back to back: below it they hammer every endpoint), got 1ns"},
		{"probe interval past a day", func(c *engine.Config) { c.Probes.Interval = huge },
			"probes.interval: must be a duration from 10ms to 24h"},
		{"independence interval 1ns", func(c *engine.Config) { c.Probes.IndependenceInterval = time.Nanosecond },
			"probes.independence_interval: must be a duration from 1s to 168h (each check resolves every endpoint's IPs, TLS issuer and ASN again), got 1ns"},
		{"probe timeout 1µs", func(c *engine.Config) { c.Probes.Timeout = time.Microsecond },
			"probes.timeout: must be a duration from 10ms to 1h (no network answers sooner), got 1µs"},
		{"cooldown 1ns", func(c *engine.Config) { c.Breaker.Cooldown = time.Nanosecond },
			"breaker.cooldown: must be a duration from 10ms to 24h (a failed trial doubles it), got 1ns"},
		{"cooldown that overflows when doubled", func(c *engine.Config) { c.Breaker.Cooldown, c.Breaker.MaxCooldown = huge/2+1, huge },
			"breaker.max_cooldown: must be a duration from 10ms to 24h (a failed trial doubles the cooldown up to it), got 2562047h47m16.854775807s"},
		{"read_timeout 1ns", func(c *engine.Config) { c.Server.ReadTimeout = time.Nanosecond },
			"server.read_timeout: must be a duration from 10ms to 24h (below it no client's request is read in time: every one is dropped), got 1ns"},
		{"write_timeout 1ns", func(c *engine.Config) { c.Server.WriteTimeout = time.Nanosecond },
			"server.write_timeout: must be a duration from 10ms to 24h (below it no answer is handed over: every request is carried out and its answer dropped), got 1ns"},
		{"max_body_bytes at the top of int64", func(c *engine.Config) { c.Server.MaxBodyBytes = math.MaxInt64 },
			"server.max_body_bytes: must be at most 1073741824 (1 GiB: a request is read whole before it is sent), got 9223372036854775807"},
		{"max_held_answer_bytes -1", func(c *engine.Config) { c.Server.MaxHeldAnswerBytes = -1 },
			"server.max_held_answer_bytes: must be positive, got -1"},
		{"max_held_answer_bytes at the top of int64", func(c *engine.Config) { c.Server.MaxHeldAnswerBytes = math.MaxInt64 },
			"server.max_held_answer_bytes: must be at most 1099511627776 (1 TiB), got 9223372036854775807"},
		{"max_held_body_bytes 0", func(c *engine.Config) { c.Server.MaxHeldBodyBytes = 0 },
			"server.max_held_body_bytes: must be positive, got 0"},
		{"max_held_body_bytes at the top of int64", func(c *engine.Config) { c.Server.MaxHeldBodyBytes = math.MaxInt64 },
			"server.max_held_body_bytes: must be at most 1099511627776 (1 TiB), got 9223372036854775807"},
		{"max_response_bytes at the top of int64", func(c *engine.Config) { c.Server.MaxResponseBytes = math.MaxInt64 },
			"server.max_response_bytes: must be at most 4294967296 (4 GiB: an answer is held whole before it is relayed), got 9223372036854775807"},
		{"write_affinity past the year 2262", func(c *engine.Config) { c.Router.WriteAffinity = huge },
			"router.write_affinity: must be at most 24h (0s turns write affinity off), got 2562047h47m16.854775807s"},
		{"backoff_base 1ns", func(c *engine.Config) { c.Breaker.BackoffBase = time.Nanosecond },
			"breaker.backoff_base: must be a duration from 10ms to 24h (below it a 429 backs nothing off), got 1ns"},
		{"backoff_max 1ns ignores every Retry-After", func(c *engine.Config) {
			c.Breaker.BackoffBase, c.Breaker.BackoffMax = 10*time.Millisecond, time.Nanosecond
		},
			"breaker.backoff_max: must be a duration from 10ms to 24h (a Retry-After is honoured up to it), got 1ns"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validBase()
			tc.mut(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v\nwant a line containing %q", err, tc.want)
			}
		})
	}
	for _, edge := range []func(*engine.Config){
		func(c *engine.Config) {
			c.Probes.Interval, c.Probes.Timeout, c.Probes.IndependenceInterval = 10*time.Millisecond, 10*time.Millisecond, time.Second
			c.Breaker.Cooldown, c.Breaker.MaxCooldown, c.Breaker.BackoffBase, c.Breaker.BackoffMax = 10*time.Millisecond, 10*time.Millisecond, 10*time.Millisecond, 10*time.Millisecond
			c.Server.ReadTimeout, c.Server.WriteTimeout = 10*time.Millisecond, 10*time.Millisecond
		},
		func(c *engine.Config) {
			c.Probes.Interval, c.Probes.Timeout, c.Probes.IndependenceInterval = 24*time.Hour, time.Hour, 7*24*time.Hour
			c.Breaker.Cooldown, c.Breaker.MaxCooldown, c.Breaker.BackoffBase, c.Breaker.BackoffMax = 24*time.Hour, 24*time.Hour, 24*time.Hour, 24*time.Hour
			c.Server.ReadTimeout, c.Server.WriteTimeout = 24*time.Hour, 24*time.Hour
			c.Server.MaxBodyBytes, c.Server.MaxResponseBytes, c.Server.MaxHeldBodyBytes, c.Server.MaxHeldAnswerBytes = 1<<30, 4<<30, 1<<40, 1<<40
			c.Router.WriteAffinity = 24 * time.Hour
		},
	} {
		c := validBase()
		edge(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("the ends of the ranges refused: %v", err)
		}
	}
}
