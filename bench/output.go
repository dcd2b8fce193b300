package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Formats are the report formats.
var Formats = []string{"table", "markdown", "csv", "json"}

// Write writes the comparison in format.
func (c *Comparison) Write(w io.Writer, format string) error {
	switch format {
	case "table":
		return c.WriteTable(w)
	case "markdown":
		return c.WriteMarkdown(w)
	case "csv":
		return c.WriteCSV(w)
	case "json":
		return c.WriteJSON(w)
	}
	return fmt.Errorf("bench: --format: %q is not one of %s", format, strings.Join(Formats, ", "))
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// column is one column of the row tables.
type column struct {
	head  string
	block int // 0: latency, 1: failures and cost
	cell  func(Row) string
	shown func(*Comparison) bool // nil: always
}

const dash = "-"

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// pct marks a thin percentile with "~".
func pct(f Figures, name string, v float64) string {
	if f.N == 0 || f.Unanswered {
		return dash
	}
	if slices.Contains(f.Thin, name) {
		return "~" + f1(v)
	}
	return f1(v)
}

func optF1(p *float64) string {
	if p == nil {
		return dash
	}
	return f1(*p)
}

func anyRow(pred func(Row) bool) func(*Comparison) bool {
	return func(c *Comparison) bool { return slices.ContainsFunc(c.Rows, pred) }
}

var columns = []column{
	{head: "policy", cell: func(r Row) string { return r.Policy }},
	{head: "delay ms", cell: func(r Row) string {
		switch {
		case r.DelayMS == nil:
			return dash
		case r.DelayMaxMS > 0:
			return fmt.Sprintf("%s (%s–%s)", f1(*r.DelayMS), f1(r.DelayMinMS), f1(r.DelayMaxMS))
		}
		return f1(*r.DelayMS)
	}},
	{head: "n", cell: func(r Row) string { return strconv.Itoa(r.Calls.N) }},
	{head: "p50", cell: func(r Row) string { return pct(r.Calls, "p50", r.Calls.P50) }},
	{head: "p95", cell: func(r Row) string { return pct(r.Calls, "p95", r.Calls.P95) }},
	{head: "p99", cell: func(r Row) string { return pct(r.Calls, "p99", r.Calls.P99) }},
	{head: "p99.9", cell: func(r Row) string { return pct(r.Calls, "p99.9", r.Calls.P999) }},
	{head: "max", cell: func(r Row) string {
		if r.Calls.Unanswered {
			return dash
		}
		return f1(r.Calls.Max)
	}},
	{head: "model p99", cell: func(r Row) string {
		if r.ModelUnstable {
			return optF1(r.ModelP99MS) + " !" // beyond the stable region (a row warning says why)
		}
		return optF1(r.ModelP99MS)
	},
		shown: anyRow(func(r Row) bool { return r.ModelP99MS != nil })},
	{head: "ctl n", cell: func(r Row) string { return strconv.Itoa(r.Control.Calls.N) },
		shown: anyRow(func(r Row) bool { return r.Control != nil })},
	{head: "ctl p99", cell: func(r Row) string { return pct(r.Control.Calls, "p99", r.Control.Calls.P99) },
		shown: anyRow(func(r Row) bool { return r.Control != nil })},
	{head: "ops", cell: func(r Row) string { return strconv.Itoa(r.Operations.Ops.N) },
		shown: anyRow(func(r Row) bool { return r.Operations != nil })},
	{head: "op p50", cell: func(r Row) string { return pct(r.Operations.Ops, "p50", r.Operations.Ops.P50) },
		shown: anyRow(func(r Row) bool { return r.Operations != nil })},
	{head: "op p99", cell: func(r Row) string { return pct(r.Operations.Ops, "p99", r.Operations.Ops.P99) },
		shown: anyRow(func(r Row) bool { return r.Operations != nil })},
	{head: "op failed", cell: func(r Row) string { return strconv.Itoa(r.Operations.Failed) },
		shown: anyRow(func(r Row) bool { return r.Operations != nil })},

	{head: "policy", block: 1, cell: func(r Row) string { return r.Policy }},
	{head: "deadline miss", block: 1, cell: func(r Row) string { return strconv.Itoa(deref(r.DeadlineMisses)) },
		shown: anyRow(func(r Row) bool { return r.DeadlineMisses != nil })},
	{head: "incomplete", block: 1, cell: func(r Row) string { return strconv.Itoa(r.Incomplete) }},
	{head: "rpc err", block: 1, cell: func(r Row) string { return strconv.Itoa(r.RPCErrors) }},
	{head: "transport", block: 1, cell: func(r Row) string { return strconv.Itoa(r.Transport) }},
	{head: "429", block: 1, cell: func(r Row) string { return fmt.Sprintf("%.2f%%", 100*r.Share429) }},
	{head: "upstream", block: 1, cell: func(r Row) string { return strconv.FormatInt(r.Upstream, 10) }},
	{head: "amp", block: 1, cell: func(r Row) string { return fmt.Sprintf("%.3f", r.Amplification) }},
	{head: "model amp", block: 1, cell: func(r Row) string {
		if r.ModelExtraLoad == nil {
			return dash
		}
		if r.ModelCapped {
			return fmt.Sprintf("%.3f cap", 1+*r.ModelExtraLoad)
		}
		return fmt.Sprintf("%.3f", 1+*r.ModelExtraLoad)
	}, shown: anyRow(func(r Row) bool { return r.ModelExtraLoad != nil })},
	{head: "hedged", block: 1, cell: func(r Row) string { return fmt.Sprintf("%.1f%%", 100*r.HedgedShare) }},
	{head: "wasted", block: 1, cell: func(r Row) string {
		if r.Wasted == nil {
			return dash
		}
		return fmt.Sprintf("%d / %.2fs", r.Wasted.Cancelled, r.Wasted.Seconds)
	}},
	{head: "load (1+h)ρ", block: 1, cell: func(r Row) string {
		if r.Load == nil {
			return dash
		}
		if r.Overload {
			return fmt.Sprintf("%.2f !", *r.Load)
		}
		return fmt.Sprintf("%.2f", *r.Load)
	}, shown: anyRow(func(r Row) bool { return r.Load != nil })},
	{head: "busiest", block: 1, cell: func(r Row) string {
		if r.MaxLoad == nil {
			return dash
		}
		s := fmt.Sprintf("%s %.2f", r.MaxLoadEndpoint, *r.MaxLoad)
		if *r.MaxLoad >= 1 {
			s += " !"
		}
		return s
	}, shown: anyRow(func(r Row) bool { return r.MaxLoad != nil })},
	{head: "ctl err", block: 1, cell: func(r Row) string { return strconv.Itoa(r.Control.Errors) },
		shown: anyRow(func(r Row) bool { return r.Control != nil })},
}

// shownColumns are the columns of block (-1: both) that apply to c.
func (c *Comparison) shownColumns(block int) []column {
	var out []column
	for _, col := range columns {
		if block >= 0 && col.block != block || block < 0 && col.block == 1 && col.head == "policy" {
			continue
		}
		if col.shown == nil || col.shown(c) {
			out = append(out, col)
		}
	}
	return out
}

// head is the report's first lines: enough to repeat the run.
func (c *Comparison) head() []string {
	w := c.Workload
	span := w.Measured
	if w.Count > 0 {
		span = fmt.Sprintf("%d operations (%s)", w.Count, w.Measured)
	}
	load := fmt.Sprintf("%s, %s arrivals at %g op/s, %s warm-up then %s measured per row, seed %d, timeout %s",
		w.Mix, w.Arrivals, w.Rate, w.Warmup, span, w.Seed, w.Timeout)
	if w.Fanout != "none" {
		load += ", fan-out " + w.Fanout
	}
	if w.Batch > 0 {
		load += fmt.Sprintf(", each operation one JSON-RPC batch of %d calls", w.Batch)
	}
	if w.ControlShare > 0 {
		load += fmt.Sprintf(", control tenant %g%% (never hedged)", 100*w.ControlShare)
	}
	if w.Deadline != "" {
		load += ", deadline " + w.Deadline
	}
	lines := []string{"target:   " + c.Target, "workload: " + load}
	for _, n := range w.Notes {
		lines = append(lines, "note:     "+n)
	}
	if c.Incidents > 0 {
		lines = append(lines, fmt.Sprintf("incidents: %d shared slow windows in each row's measured span, at the same offsets", c.Incidents))
	}
	if c.Baseline != "" {
		dups := "one duplicate after the row's delay, S(t)·S(t−d)"
		if c.ModelMaxExtra > 1 {
			dups = fmt.Sprintf("up to %d duplicates a delay apart, S(t)·S(t−d)·…·S(t−%dd)", c.ModelMaxExtra, c.ModelMaxExtra)
		}
		lines = append(lines, "model:    p99 of "+dups+" under the row's hedge budget, over the "+c.Baseline+" row's answers")
	}
	lines = append(lines, "latencies in ms over every call, errors and timeouts included; ~ marks a rough percentile")
	return lines
}

// warnings are the run's and every row's warnings, each once.
func (c *Comparison) warnings() []string {
	out := slices.Clone(c.Warnings)
	for _, r := range c.Rows {
		for _, w := range r.Warnings {
			out = append(out, r.Policy+": "+w)
		}
	}
	return out
}

func (c *Comparison) grid(cols []column) [][]string {
	g := [][]string{{}}
	for _, col := range cols {
		g[0] = append(g[0], col.head)
	}
	for _, r := range c.Rows {
		line := make([]string, len(cols))
		for i, col := range cols {
			line[i] = col.cell(r)
		}
		g = append(g, line)
	}
	return g
}

// WriteTable writes the head, the latency table and the failure-and-cost
// table (policies as rows, columns aligned), then the warnings.
func (c *Comparison) WriteTable(w io.Writer) error {
	var b strings.Builder
	for _, l := range c.head() {
		b.WriteString(l + "\n")
	}
	for block := range 2 {
		b.WriteString("\n")
		writeGrid(&b, c.grid(c.shownColumns(block)))
	}
	if ws := c.warnings(); len(ws) > 0 {
		b.WriteString("\n")
		for _, warn := range ws {
			b.WriteString("warning: " + warn + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeGrid left-aligns the first column and right-aligns the others.
func writeGrid(b *strings.Builder, grid [][]string) {
	widths := make([]int, len(grid[0]))
	for _, line := range grid {
		for i, cell := range line {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
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
}

// WriteMarkdown writes the head as a list, one table with every column
// that applies, and the warnings.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	for _, l := range c.head() {
		b.WriteString("- " + strings.TrimSpace(l) + "\n")
	}
	b.WriteString("\n")
	g := c.grid(c.shownColumns(-1))
	for i, line := range g {
		b.WriteString("| " + strings.Join(escapeMD(line), " | ") + " |\n")
		if i == 0 {
			seps := make([]string, len(line))
			for j := range seps {
				seps[j] = "---:"
			}
			seps[0] = "---"
			b.WriteString("| " + strings.Join(seps, " | ") + " |\n")
		}
	}
	if ws := c.warnings(); len(ws) > 0 {
		b.WriteString("\n")
		for _, warn := range ws {
			b.WriteString("> warning: " + warn + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func escapeMD(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return out
}

// csvHeader is the CSV schema: every figure of a row as a plain number
// (empty where it does not apply), whatever the run.
var csvHeader = []string{"policy", "kind", "delay_ms", "delay_min_ms", "delay_max_ms", "n", "ok",
	"p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "thin", "model_p99_ms",
	"deadline_misses", "incomplete", "rpc_errors", "transport_errors", "share_429",
	"upstream_requests", "amplification", "hedged_share", "wasted_cancelled", "wasted_seconds", "load", "overload", "max_endpoint_load",
	"control_n", "control_p99_ms", "control_errors", "ops_n", "ops_p50_ms", "ops_p99_ms", "ops_failed", "max_send_lag_ms",
	"model_extra_load", "model_budget_capped", "model_load", "model_unstable"}

// WriteCSV writes one line per row under csvHeader.
func (c *Comparison) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return num(*p)
	}
	// fig is a latency figure: empty where the calls got no answer.
	fig := func(f Figures, v float64) string {
		if f.Unanswered {
			return ""
		}
		return num(v)
	}
	for _, r := range c.Rows {
		rec := []string{r.Policy, r.Kind, opt(r.DelayMS), "", "", strconv.Itoa(r.Calls.N), strconv.Itoa(r.OK),
			fig(r.Calls, r.Calls.P50), fig(r.Calls, r.Calls.P95), fig(r.Calls, r.Calls.P99), fig(r.Calls, r.Calls.P999), fig(r.Calls, r.Calls.Max),
			strings.Join(r.Calls.Thin, " "), opt(r.ModelP99MS), "", strconv.Itoa(r.Incomplete),
			strconv.Itoa(r.RPCErrors), strconv.Itoa(r.Transport), num(r.Share429), strconv.FormatInt(r.Upstream, 10),
			num(r.Amplification), num(r.HedgedShare), "", "", opt(r.Load), strconv.FormatBool(r.Overload), opt(r.MaxLoad),
			"", "", "", "", "", "", "", num(r.MaxSendLagMS), opt(r.ModelExtraLoad), "", opt(r.ModelLoad), ""}
		if r.DelayMaxMS > 0 {
			rec[3], rec[4] = num(r.DelayMinMS), num(r.DelayMaxMS)
		}
		if r.DeadlineMisses != nil {
			rec[14] = strconv.Itoa(*r.DeadlineMisses)
		}
		if r.ModelExtraLoad != nil {
			rec[36] = strconv.FormatBool(r.ModelCapped)
		}
		if r.ModelLoad != nil {
			rec[38] = strconv.FormatBool(r.ModelUnstable)
		}
		if r.Wasted != nil {
			rec[22], rec[23] = strconv.FormatInt(r.Wasted.Cancelled, 10), num(r.Wasted.Seconds)
		}
		if r.Control != nil {
			rec[27], rec[28], rec[29] = strconv.Itoa(r.Control.Calls.N), fig(r.Control.Calls, r.Control.Calls.P99), strconv.Itoa(r.Control.Errors)
		}
		if o := r.Operations; o != nil {
			rec[30], rec[31], rec[32], rec[33] = strconv.Itoa(o.Ops.N), fig(o.Ops, o.Ops.P50), fig(o.Ops, o.Ops.P99), strconv.Itoa(o.Failed)
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}
