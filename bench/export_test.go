package bench

import (
	"context"
	"math"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// Internals the external tests pin.
var (
	FiguresOf        = figuresOf
	Beyond           = beyond
	Completion       = completion
	Amplification    = amplification
	LoadCheck        = loadCheck
	GeneratorWarning = generatorWarning
	RefusedBetween   = refusedBetween
	HeldBackWarning  = heldBackWarning
	UniqueParams     = uniqueParams
	Summarize        = summarize
)

// SetReadmitSlack sets what the drill's readmission allows beyond the
// trials' pace, until the test ends.
func SetReadmitSlack(t interface{ Cleanup(func()) }, d time.Duration) {
	old := readmitSlack
	readmitSlack = d
	t.Cleanup(func() { readmitSlack = old })
}

// ReadmitWait is the drill's readmission wait for endpoint as one status
// read at now sets it, the fault cleared at cleared: the breaker's next
// trial and the give-up time on the drill's clock, and the wait in words.
func ReadmitWait(stepTimeout time.Duration, endpoint string, cleared, now time.Time, st engine.Snapshot) (trialAt, until time.Time, plan string) {
	d := &drill{cfg: DrillConfig{StepTimeout: stepTimeout}, settings: st.Settings, endpoint: endpoint}
	ep, _ := st.Endpoint(endpoint)
	w := d.readmitWaitOf(cleared, now, st, ep, readmitWait{})
	return w.trialAt, w.until, d.plan(w, cleared)
}

// Plan exposes a row's plan as (offset, warm, control, methods, bodies).
func (l Load) Plan() ([]PlannedOp, error) {
	ops, err := l.plan()
	out := make([]PlannedOp, len(ops))
	for i, o := range ops {
		p := PlannedOp{At: o.at, Warm: o.warm, Control: o.control}
		for _, c := range o.calls {
			p.Methods = append(p.Methods, c.method)
			p.URLs = append(p.URLs, c.url)
			p.Bodies = append(p.Bodies, string(c.body))
		}
		out[i] = p
	}
	return out, err
}

// WastedOf is wastedBetween over the methods' cancelled losers and the
// seconds of upstream time they used.
func WastedOf(before, after map[string][2]float64, methods []string) Wasted {
	conv := func(m map[string][2]float64) map[string]engine.MethodStatus {
		out := map[string]engine.MethodStatus{}
		for k, v := range m {
			out[k] = engine.MethodStatus{AccountSnapshot: engine.AccountSnapshot{Losers: int64(v[0]),
				LoserTime: time.Duration(math.Round(v[1] * float64(time.Second)))}}
		}
		return out
	}
	return wastedBetween(conv(before), conv(after), methods)
}

// PlannedOp is one planned operation as the tests see it.
type PlannedOp struct {
	At      time.Duration
	Warm    bool
	Control bool
	Methods []string
	URLs    []string
	Bodies  []string
}

// ProgressLine is the progress bar's line for a run of rows at now.
func ProgressLine(rows int, rowLen time.Duration, cur int, name string, origin, now time.Time) string {
	p := NewProgress(nil)
	p.rows, p.rowLen = rows, rowLen
	p.row(cur, name, origin)
	return p.line(now)
}

// WithBaseline gives a row the answers the model reads.
func WithBaseline(r Row, lat []time.Duration) Row {
	r.baseline = lat
	return r
}

// Baseline is the answers a row gives the model.
func Baseline(r Row) []time.Duration { return r.baseline }

// Model fills the model columns as a fresh engine's rows ran.
func (c *Comparison) Model() { c.model(defaultModelSettings()) }

// Describe is the report's head for cfg, without running anything.
func Describe(cfg CompareConfig) *Comparison { return cfg.describe(nil) }

// RunDrillLoad runs the drill's own load on url until ctx ends.
func RunDrillLoad(ctx context.Context, url string) {
	newDrillLoad(url, NewClient(), 50, 1).run(ctx)
}

// SetServingBound sets how long the serving step waits for the router to
// settle, until the test ends.
func SetServingBound(t interface{ Cleanup(func()) }, d time.Duration) {
	old := servingBound
	servingBound = d
	t.Cleanup(func() { servingBound = old })
}

// SetLeaseRenew makes drills renew their lease every d, until the test
// ends.
func SetLeaseRenew(t interface{ Cleanup(func()) }, d time.Duration) {
	old := leaseRenew
	leaseRenew = d
	t.Cleanup(func() { leaseRenew = old })
}

// DrillReadError is what one read of the drill's load on url said when it
// failed ("" when it did not).
func DrillReadError(ctx context.Context, url string) string {
	return newDrillLoad(url, NewClient(), 50, 1).read(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)).err
}
