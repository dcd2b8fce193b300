package bench

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Report summarises one run. Latencies are in milliseconds and cover the
// OK requests; errors and incomplete requests are counted beside them.
type Report struct {
	Policy        string         `json:"policy"`
	HedgeDelayMS  float64        `json:"hedge_delay_ms,omitempty"` // the engine's delay at the end of the run
	DelaySource   string         `json:"hedge_delay_source,omitempty"`
	DelayMinMS    float64        `json:"hedge_delay_min_ms,omitempty"` // sampled during the run
	DelayMaxMS    float64        `json:"hedge_delay_max_ms,omitempty"`
	Planned       int            `json:"planned"`
	Requests      int            `json:"requests"`   // sent
	OK            int            `json:"ok"`         // HTTP 200 with a result
	Errors        int            `json:"errors"`     // answered with an HTTP or JSON-RPC error
	Incomplete    int            `json:"incomplete"` // no answer: transport error or timeout
	P50           float64        `json:"p50_ms"`
	P95           float64        `json:"p95_ms"`
	P99           float64        `json:"p99_ms"`
	P999          float64        `json:"p999_ms"`
	Max           float64        `json:"max_ms"`
	Attempts      int64          `json:"upstream_attempts"` // sum of X-Rpcdash-Attempts
	Amplification float64        `json:"amplification"`     // attempts ÷ requests
	HedgeShare    float64        `json:"hedge_share"`       // share of requests with X-Rpcdash-Hedged: 1
	MaxSendLag    float64        `json:"max_send_lag_ms"`   // the generator's own lateness
	Endpoints     map[string]int `json:"endpoints,omitempty"`
	Engine        *EngineCounts  `json:"engine,omitempty"`
}

// EngineCounts are the engine's own attempt counters for the method over
// the measured run (its GET /v1/status before and after), by role.
type EngineCounts struct {
	Primary   int64 `json:"primary"`
	Hedge     int64 `json:"hedge"`
	HedgesWon int64 `json:"hedges_won"`
	Failover  int64 `json:"failover"`
}

// Histogram records the latencies of r's OK requests in microseconds.
func (r *Result) Histogram() *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for _, s := range r.Samples {
		if s.OK() {
			_ = h.RecordValue(max(int64(s.Latency/time.Microsecond), 1))
		}
	}
	return h
}

// Latencies returns the latencies of r's OK requests.
func (r *Result) Latencies() []time.Duration {
	out := make([]time.Duration, 0, len(r.Samples))
	for _, s := range r.Samples {
		if s.OK() {
			out = append(out, s.Latency)
		}
	}
	return out
}

// Summarize reduces a run to a Report.
func Summarize(policy string, r *Result) Report {
	rep := Report{Policy: policy, Planned: r.Planned, Requests: len(r.Samples), Endpoints: map[string]int{}}
	var lag time.Duration
	hedged := 0
	for _, s := range r.Samples {
		switch {
		case s.Err != "":
			rep.Incomplete++
		case s.OK():
			rep.OK++
		default:
			rep.Errors++
		}
		rep.Attempts += int64(s.Attempts)
		if s.Hedged {
			hedged++
		}
		if s.Endpoint != "" {
			rep.Endpoints[s.Endpoint]++
		}
		lag = max(lag, s.SendLag)
	}
	h := r.Histogram()
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1000 }
	if h.TotalCount() > 0 {
		rep.P50, rep.P95, rep.P99, rep.P999 = q(50), q(95), q(99), q(99.9)
		rep.Max = float64(h.Max()) / 1000
	}
	if rep.Requests > 0 {
		rep.Amplification = float64(rep.Attempts) / float64(rep.Requests)
		rep.HedgeShare = float64(hedged) / float64(rep.Requests)
	}
	rep.MaxSendLag = msOf(lag)
	return rep
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Prediction is the hedging model's completion-time quantiles, in ms.
type Prediction struct {
	Label   string  `json:"label"`
	DelayMS float64 `json:"delay_ms"`
	P50     float64 `json:"p50_ms"`
	P95     float64 `json:"p95_ms"`
	P99     float64 `json:"p99_ms"`
	P999    float64 `json:"p999_ms"`
}

// WriteTable writes the runs side by side, one column per run and then one
// per prediction, one row per figure, columns aligned.
func WriteTable(w io.Writer, runs []Report, preds []Prediction) error {
	const dash = "-"
	f1 := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	delay := func(r Report) string {
		if r.HedgeDelayMS == 0 {
			return dash
		}
		return f1(r.HedgeDelayMS) + " " + r.DelaySource
	}
	rows := []struct {
		label string
		run   func(Report) string
		pred  func(Prediction) string
	}{
		{"hedge delay (ms)", delay, func(p Prediction) string { return f1(p.DelayMS) }},
		{"delay range (ms)", func(r Report) string {
			if r.DelayMaxMS == 0 {
				return dash
			}
			return f1(r.DelayMinMS) + "–" + f1(r.DelayMaxMS)
		}, nil},
		{"requests", func(r Report) string { return fmt.Sprint(r.Requests) }, nil},
		{"errors", func(r Report) string { return fmt.Sprint(r.Errors) }, nil},
		{"incomplete", func(r Report) string { return fmt.Sprint(r.Incomplete) }, nil},
		{"p50 (ms)", func(r Report) string { return f1(r.P50) }, func(p Prediction) string { return f1(p.P50) }},
		{"p95 (ms)", func(r Report) string { return f1(r.P95) }, func(p Prediction) string { return f1(p.P95) }},
		{"p99 (ms)", func(r Report) string { return f1(r.P99) }, func(p Prediction) string { return f1(p.P99) }},
		{"p99.9 (ms)", func(r Report) string { return f1(r.P999) }, func(p Prediction) string { return f1(p.P999) }},
		{"max (ms)", func(r Report) string { return f1(r.Max) }, nil},
		{"upstream attempts", func(r Report) string { return fmt.Sprint(r.Attempts) }, nil},
		{"amplification", func(r Report) string { return fmt.Sprintf("%.3f", r.Amplification) }, nil},
		{"hedged share", func(r Report) string { return fmt.Sprintf("%.1f%%", 100*r.HedgeShare) }, nil},
		{"engine hedges (won)", func(r Report) string {
			if r.Engine == nil {
				return dash
			}
			return fmt.Sprintf("%d (%d)", r.Engine.Hedge, r.Engine.HedgesWon)
		}, nil},
		{"engine failovers", func(r Report) string {
			if r.Engine == nil {
				return dash
			}
			return fmt.Sprint(r.Engine.Failover)
		}, nil},
		{"max send lag (ms)", func(r Report) string { return f1(r.MaxSendLag) }, nil},
	}
	grid := [][]string{{"policy"}}
	for _, r := range runs {
		grid[0] = append(grid[0], r.Policy)
	}
	for _, p := range preds {
		grid[0] = append(grid[0], p.Label)
	}
	for _, row := range rows {
		line := []string{row.label}
		for _, r := range runs {
			line = append(line, row.run(r))
		}
		for _, p := range preds {
			if row.pred == nil {
				line = append(line, dash)
			} else {
				line = append(line, row.pred(p))
			}
		}
		grid = append(grid, line)
	}
	return writeGrid(w, grid)
}

// writeGrid left-aligns the first column and right-aligns the others.
func writeGrid(w io.Writer, grid [][]string) error {
	widths := make([]int, len(grid[0]))
	for _, line := range grid {
		for i, cell := range line {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	var b strings.Builder
	for _, line := range grid {
		for i, cell := range line {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i == 0 {
				b.WriteString(cell + pad)
			} else {
				b.WriteString("  " + pad + cell)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
