package bench

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"
)

// Comparison is a whole run: what was sent to what, and one Row per policy.
type Comparison struct {
	Target   string       `json:"target"`         // the built-in sims' scenario, or the URL loaded
	Workload WorkloadInfo `json:"workload"`       //
	Rows     []Row        `json:"rows"`           //
	Baseline string       `json:"model_baseline"` // the row whose latencies the model reads; "" = no model
	// ModelMaxExtra is the duplicates per request the model forecasts (the
	// rows' hedge.max_extra).
	ModelMaxExtra int      `json:"model_max_extra,omitempty"`
	Incidents     int      `json:"incidents,omitempty"` // shared incident windows in each row's measured span
	Warnings      []string `json:"warnings,omitempty"`  // about the run as a whole
	// Interrupted names the row the run was stopped in; the rows before it
	// ran whole and are reported.
	Interrupted string `json:"interrupted,omitempty"`
}

// WorkloadInfo is the workload as the report states it: enough to repeat
// the run.
type WorkloadInfo struct {
	Mix          string   `json:"mix"`
	Arrivals     string   `json:"arrivals"`
	Rate         float64  `json:"rate"` // operations per second
	Measured     string   `json:"measured"`
	Count        int      `json:"count,omitempty"`
	Warmup       string   `json:"warmup"`
	Seed         int64    `json:"seed"`
	Fanout       string   `json:"fanout"`
	Batch        int      `json:"batch,omitempty"` // calls in each operation's one JSON-RPC batch (--batch)
	ControlShare float64  `json:"control_share,omitempty"`
	Timeout      string   `json:"timeout"`
	Deadline     string   `json:"deadline,omitempty"`
	Notes        []string `json:"notes,omitempty"`
}

// Row is one policy's figures over its measured span. Latencies cover
// every call of the main tenant, errors and timeouts included.
type Row struct {
	Policy string `json:"policy"`
	Kind   string `json:"kind"`
	// DelayMS is the delay in force: the fixed one, or the auto delay's
	// mean over the span (DelayMinMS–DelayMaxMS its range); nil unhedged.
	DelayMS    *float64 `json:"delay_ms,omitempty"`
	DelayMinMS float64  `json:"delay_min_ms,omitempty"`
	DelayMaxMS float64  `json:"delay_max_ms,omitempty"`

	Calls Figures `json:"calls"`
	OK    int     `json:"ok"`
	// DeadlineMisses are calls not answered within --deadline (late or
	// never); nil without one.
	DeadlineMisses *int `json:"deadline_misses,omitempty"`
	Incomplete     int  `json:"incomplete"`       // no answer within the timeout
	RPCErrors      int  `json:"rpc_errors"`       // answers carrying a JSON-RPC error
	Transport      int  `json:"transport_errors"` // no usable answer: connection or HTTP failure
	// Share429 is the share of upstream requests answered HTTP 429.
	Share429      float64 `json:"share_429"`
	Upstream      int64   `json:"upstream_requests"`
	Amplification float64 `json:"amplification"`
	HedgedShare   float64 `json:"hedged_share"`
	Wasted        *Wasted `json:"wasted,omitempty"` // nil where neither the upstreams nor the engine can be asked
	// HedgesRefused counts, by reason, the calls whose hedge fell due and
	// was not sent then (the instance's hedges_refused over the row).
	HedgesRefused map[string]int64 `json:"hedges_refused,omitempty"`
	// Failovers are the instance's failover attempts over the row: an
	// attempt raced beside one overdue at its deadline, or sent after one
	// failed (the instance's attempts by role). Unhedged, they are the
	// upstream requests beyond one per call; nil without an instance.
	Failovers *int64 `json:"failovers,omitempty"`
	// ModelP99MS is the hedging model's p99 at DelayMS from the baseline
	// row; nil for unhedged rows or without a baseline. ModelExtraLoad is
	// its extra upstream load (hedges per call: the amplification it
	// predicts is 1 + that), ModelCapped whether the hedge budget caps the
	// firing at that delay.
	ModelP99MS     *float64 `json:"model_p99_ms,omitempty"`
	ModelExtraLoad *float64 `json:"model_extra_load,omitempty"`
	ModelCapped    bool     `json:"model_budget_capped,omitempty"`
	// ModelLoad is (1+h)·ρ as the model's amplification would offer it
	// (each of the row's calls with ModelExtraLoad duplicates, the control
	// tenant beside) against the endpoints' capacity; nil without one.
	// ModelUnstable: it is 1 or more, where the queue has no steady state
	// and the model's p99, which assumes a duplicate slows nothing down, is
	// outside the region it holds in.
	ModelLoad     *float64 `json:"model_load,omitempty"`
	ModelUnstable bool     `json:"model_unstable,omitempty"`
	// Load is (1+h)·ρ against the endpoints' capacity; nil without one.
	Load     *float64 `json:"load,omitempty"`
	Overload bool     `json:"overload,omitempty"`
	// MaxLoad is the busiest built-in sim's requests per second over its
	// capacity (both tenants).
	MaxLoad         *float64 `json:"max_endpoint_load,omitempty"`
	MaxLoadEndpoint string   `json:"max_endpoint,omitempty"`

	Control    *Tenant     `json:"control,omitempty"`
	Operations *Operations `json:"operations,omitempty"`

	FirstFailure string         `json:"first_failure,omitempty"` // what the first failed call of the main tenant got
	MaxSendLagMS float64        `json:"max_send_lag_ms"`
	Endpoints    map[string]int `json:"endpoints,omitempty"` // who answered
	Warnings     []string       `json:"warnings,omitempty"`

	baseline []time.Duration // the OK latencies, for the model
}

// Tenant is the control tenant's figures in a row.
type Tenant struct {
	Calls  Figures `json:"calls"`
	Errors int     `json:"errors"` // anything but an OK answer
}

// Operations are the fan-out figures: an operation completes when its
// quorum of calls has answered.
type Operations struct {
	K, Q   int
	Ops    Figures `json:"ops"`
	Failed int     `json:"failed"` // could not reach the quorum
}

// summarize computes a row's figures from its samples: the measured calls
// of the main tenant, the control tenant's, and the operations.
func summarize(p Policy, res *Result, w Workload, deadline time.Duration) Row {
	row := Row{Policy: p.Name, Kind: p.Kind, Endpoints: map[string]int{}}
	var main, ctl []time.Duration
	var lags []time.Duration
	ops := map[int][]Sample{}
	ctlErrors, ctlAnswered, hedged, seen429 := 0, 0, 0, 0
	for _, s := range res.Samples {
		if s.Warm {
			continue
		}
		lags = append(lags, s.SendLag)
		if s.Control {
			ctl = append(ctl, s.Latency)
			if !s.OK() {
				ctlErrors++
			}
			if answered(s) {
				ctlAnswered++
			}
			continue
		}
		ops[s.Op] = append(ops[s.Op], s)
		main = append(main, s.Latency)
		switch s.Outcome() {
		case OutcomeOK:
			row.OK++
			row.baseline = append(row.baseline, s.Latency)
		case OutcomeIncomplete:
			row.Incomplete++
		case OutcomeRPCError:
			row.RPCErrors++
		default:
			row.Transport++
		}
		if !s.OK() && row.FirstFailure == "" {
			row.FirstFailure = fmt.Sprintf("%s %s at +%s: %s", s.Outcome(), s.Method, s.Offset.Round(time.Millisecond), s.Message+s.Err)
		}
		if deadline > 0 && (s.Latency > deadline || s.Timeout) {
			row.DeadlineMisses = ptr(deref(row.DeadlineMisses) + 1)
		}
		row.Upstream += int64(max(s.Attempts, 1))
		if s.Hedged {
			hedged++
		}
		if s.Status == http.StatusTooManyRequests {
			seen429++
		}
		if s.Endpoint != "" {
			row.Endpoints[s.Endpoint]++
		}
		row.MaxSendLagMS = max(row.MaxSendLagMS, msOf(s.SendLag))
	}
	if deadline > 0 && row.DeadlineMisses == nil {
		row.DeadlineMisses = ptr(0)
	}
	row.Calls = figuresOf(main)
	if row.OK+row.RPCErrors == 0 {
		row.Calls = unanswered(len(main))
	}
	row.Amplification = amplification(row.Upstream, len(main))
	if len(main) > 0 {
		row.HedgedShare = float64(hedged) / float64(len(main))
		row.Share429 = float64(seen429) / float64(row.Upstream)
	}
	if w.ControlShare > 0 {
		row.Control = &Tenant{Calls: figuresOf(ctl), Errors: ctlErrors}
		if ctlAnswered == 0 {
			row.Control.Calls = unanswered(len(ctl))
		}
	}
	if w.Fanout.calls() > 1 {
		o := &Operations{K: w.Fanout.calls(), Q: w.Fanout.quorum()}
		var lat []time.Duration
		for _, k := range slices.Sorted(maps.Keys(ops)) {
			d, ok := completion(ops[k], o.Q)
			lat = append(lat, d)
			if !ok {
				o.Failed++
			}
		}
		o.Ops = figuresOf(lat)
		if row.Calls.Unanswered {
			o.Ops = unanswered(len(lat))
		}
		row.Operations = o
	}
	row.warnThin("calls", row.Calls)
	if row.Control != nil {
		row.warnThin("control calls", row.Control.Calls)
	}
	if row.Operations != nil {
		row.warnThin("operations", row.Operations.Ops)
	}
	if n := len(main) - row.OK; n > 0 {
		row.Warnings = append(row.Warnings, fmt.Sprintf("%d calls failed; the first: %s", n, row.FirstFailure))
	}
	if msg := generatorWarning(lags); msg != "" {
		row.Warnings = append(row.Warnings, msg)
	}
	return row
}

// answered says whether a call got an answer: a result or a JSON-RPC
// error, not a failed connection, an HTTP error or a timeout.
func answered(s Sample) bool {
	o := s.Outcome()
	return o == OutcomeOK || o == OutcomeRPCError
}

// unanswered are the figures of n calls or operations none of which got
// an answer: no latencies (n = 0: none at all).
func unanswered(n int) Figures { return Figures{N: n, Unanswered: n > 0} }

// Unanswered is an error naming each row whose calls of the main tenant,
// or of the control tenant, got no answer at all (a target that refused
// every connection, or never answered): the run failed. nil otherwise.
func (c *Comparison) Unanswered() error {
	var errs []error
	for _, r := range c.Rows {
		if r.Calls.Unanswered {
			errs = append(errs, fmt.Errorf("bench: row %s: none of %d calls got an answer (%d transport failures, %d timeouts); the first: %s",
				r.Policy, r.Calls.N, r.Transport, r.Incomplete, r.FirstFailure))
		}
		if r.Control != nil && r.Control.Calls.Unanswered {
			errs = append(errs, fmt.Errorf("bench: row %s: none of the control tenant's %d calls got an answer", r.Policy, r.Control.Calls.N))
		}
	}
	return errors.Join(errs...)
}

func (r *Row) warnThin(what string, f Figures) {
	if len(f.Thin) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %v rest on fewer than %d of %d values: rough figures (run longer or faster)", what, f.Thin, minBeyond, f.N))
	}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
