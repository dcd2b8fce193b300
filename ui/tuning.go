package ui

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/engine"
)

// tuningView is the hedge tuning view of one method (t on a method row):
// its live primary-latency distribution with the delay drawn on it, and
// the engine's forecast for candidate delays. It reads through the
// Backend, so it works attached too; it refreshes every tuningRefresh.
type tuningView struct {
	method    string
	dist      engine.MethodDistribution
	rows      []tuningRow
	notes     []string
	have      bool // an answer arrived
	fetching  bool
	fetchedAt time.Time
	err       error
	cursor    int
}

// tuningRefresh is how often the open view asks again: the distribution
// moves slowly, and a forecast of every candidate is not free.
const tuningRefresh = time.Second

// tuningRow is one candidate delay with its forecast.
type tuningRow struct {
	labels []string // "current", "auto p95", "round"
	spec   string   // what the forecast was asked for
	policy delayPolicy
	f      engine.HedgeForecast
}

// delayPolicy is what enter applies for a row.
type delayPolicy struct {
	current  bool    // in force already
	off      bool    // hedging off for the method
	delay    string  // "auto" or a duration
	quantile float64 // with auto: the quantile to set
}

func (r tuningRow) label() string { return strings.Join(r.labels, " = ") }

// tuningMsg is the answer to one fetch of the view's data.
type tuningMsg struct {
	method string
	dist   engine.MethodDistribution
	rows   []tuningRow
	notes  []string
	err    error
}

// roundDelays are the round values the table offers, those that fall
// within the method's p50–p99.9.
var roundDelays = []time.Duration{5, 10, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 250, 300, 400, 500, 750, 1000, 1500, 2000}

// autoQuantiles are the auto rows of the table.
var autoQuantiles = []float64{0.80, 0.90, 0.95, 0.99}

// maxRoundRows bounds the round values in the table.
const maxRoundRows = 3

// tuningCandidates are the rows to forecast for md: the delay in force,
// hedging off (the baseline each delay's p99 is weighed against: where
// hedging buys no p99 worth its load, off is the best row; the hedging
// seed: do not hedge what is already fast), auto at p80, p90, p95 and p99,
// and a few round values within the method's p50–p99.9.
func tuningCandidates(md engine.MethodDistribution) []tuningRow {
	cur := "current"
	if !md.Hedge.Enabled {
		cur = "current: hedging off"
	}
	rows := []tuningRow{{labels: []string{cur}, spec: "current", policy: delayPolicy{current: true, off: !md.Hedge.Enabled}}}
	if md.Hedge.Enabled {
		rows = append(rows, tuningRow{labels: []string{"hedging off"}, spec: "off", policy: delayPolicy{off: true}})
	}
	for _, q := range autoQuantiles {
		rows = append(rows, tuningRow{labels: []string{"auto " + quantileLabel(q)}, spec: "auto:" + strconv.FormatFloat(q, 'f', -1, 64),
			policy: delayPolicy{delay: "auto", quantile: q}})
	}
	lo, okLo := md.Primary.Quantile(0.5)
	hi, okHi := md.Primary.Quantile(0.999)
	if !okLo {
		lo, hi = 50*time.Millisecond, 500*time.Millisecond
	} else if !okHi {
		hi = md.Primary.Max()
	}
	var in []time.Duration
	for _, r := range roundDelays {
		if d := r * time.Millisecond; d >= lo && d <= hi {
			in = append(in, d)
		}
	}
	if len(in) > maxRoundRows { // spread over the range: first, middle, last
		in = []time.Duration{in[0], in[len(in)/2], in[len(in)-1]}
	}
	for _, d := range in {
		rows = append(rows, tuningRow{labels: []string{fmtDelay(d)}, spec: d.String(), policy: delayPolicy{delay: d.String()}})
	}
	return rows
}

// mergeRows attaches the forecasts (one per row, in order) and folds rows
// whose delay came out the same into the first of them ("current = auto
// p95"). The current row of a method whose hedging is off (on is false)
// is not hedged, and folds into nothing.
func mergeRows(rows []tuningRow, fs []engine.HedgeForecast, on bool) []tuningRow {
	hedged := func(r tuningRow) bool { return !r.policy.off && (on || !r.policy.current) }
	var out []tuningRow
	for i, r := range rows {
		if i >= len(fs) {
			break
		}
		r.f = fs[i]
		j := slices.IndexFunc(out, func(o tuningRow) bool { return o.f.Delay == r.f.Delay && hedged(o) == hedged(r) })
		if j < 0 {
			out = append(out, r)
			continue
		}
		out[j].labels = append(out[j].labels, r.labels...)
	}
	return out
}

func tuningFetchCmd(be Backend, method string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
		defer cancel()
		md, err := be.Distribution(ctx, method)
		if err != nil {
			return tuningMsg{method: method, err: err}
		}
		rows := tuningCandidates(md)
		specs := make([]string, len(rows))
		for i, r := range rows {
			specs[i] = r.spec
		}
		rep, err := be.Forecast(ctx, method, specs)
		if err != nil {
			return tuningMsg{method: method, dist: md, err: err}
		}
		return tuningMsg{method: method, dist: md, rows: mergeRows(rows, rep.Rows, md.Hedge.Enabled), notes: rep.Notes}
	}
}

// openTuning opens the view on the selected method row.
func (m Model) openTuning() (tea.Model, tea.Cmd) {
	name := m.selectedMethod()
	switch {
	case name == "":
		m.status = statusLine{text: "t: choose a method row in the methods panel first (tab, ↑/↓)", err: true}
		return m, nil
	case m.snap.Methods[name].Hedge == nil:
		m.status = statusLine{text: name + " is never hedged (" + m.snap.Methods[name].Class.String() + "): nothing to tune", err: true}
		return m, nil
	}
	m.tuning = tuningView{method: name}
	m.overlay = overlayTuning
	m.status = statusLine{}
	cmd := m.fetchTuning(true) // before m is returned: it marks the fetch on m
	return m, cmd
}

// fetchTuning starts a fetch of the view's data unless one is in flight,
// the screen is frozen (once the view has data: a view opened while frozen
// still gets its first) or (unless now) the last answer is recent.
func (m *Model) fetchTuning(now bool) tea.Cmd {
	t := &m.tuning
	if m.overlay != overlayTuning || t.fetching || m.frozen && t.have || m.opts.Backend == nil {
		return nil
	}
	if !now && m.opts.Now().Sub(t.fetchedAt) < tuningRefresh {
		return nil
	}
	t.fetching = true
	return tuningFetchCmd(m.opts.Backend, t.method)
}

func (m *Model) onTuning(msg tuningMsg) {
	t := &m.tuning
	if msg.method != t.method {
		return // an answer for a view since closed
	}
	t.fetching, t.fetchedAt = false, m.opts.Now()
	if m.frozen && t.have {
		return
	}
	t.err = msg.err
	if msg.err != nil && msg.rows == nil {
		return // keep what is on screen, marked
	}
	// The highlight stays on the same candidate: rows merge, split and
	// move as the live delays change, and enter must apply what was chosen.
	var chosen string
	if t.cursor < len(t.rows) {
		chosen = t.rows[t.cursor].spec
	}
	t.dist, t.rows, t.notes, t.have = msg.dist, msg.rows, msg.notes, true
	t.cursor = clamp(t.cursor, 0, len(t.rows)-1)
	for i, r := range t.rows {
		if r.spec == chosen {
			t.cursor = i
			break
		}
	}
}

func (m Model) onTuningKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k, t := m.keys, &m.tuning
	if m.opts.ReadOnly && (msg.Type == tea.KeyEnter || m.isMutatingKey(msg)) {
		m.status = statusLine{text: "read-only console (--readonly): the tuning view only shows", err: true}
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Up):
		t.cursor = clamp(t.cursor-1, 0, len(t.rows)-1)
	case key.Matches(msg, k.Down):
		t.cursor = clamp(t.cursor+1, 0, len(t.rows)-1)
	case msg.Type == tea.KeyEnter:
		return m.applyTuningRow()
	case key.Matches(msg, k.Auto):
		q := m.snap.Hedge.Quantile
		delay := "auto"
		u := engine.HedgeUpdate{Method: t.method, Delay: &delay}
		if q > 0 {
			u.Quantile = &q
		}
		return m.do(action{kind: actHedge, hedge: u, desc: fmt.Sprintf("hedge delay of %s → auto (%s)", t.method, quantileLabel(q))})
	default:
		m.status = statusLine{text: msg.String() + ": not in the tuning view (" + m.tuningKeys() + ")", viewHint: true}
	}
	return m, nil
}

// tuningKeys says what the tuning view's keys do.
func (m Model) tuningKeys() string {
	if m.opts.ReadOnly {
		return "↑/↓ row, esc/q leaves; read-only, it only shows"
	}
	return "↑/↓ row, enter applies it, a auto, esc/q leaves"
}

// applyTuningRow asks before applying the highlighted row to the method.
func (m Model) applyTuningRow() (tea.Model, tea.Cmd) {
	t := m.tuning
	if len(t.rows) == 0 {
		return m, nil
	}
	r := t.rows[t.cursor]
	if r.policy.current {
		m.status = statusLine{text: "the current row is what " + t.method + " runs with now"}
		return m, nil
	}
	if r.policy.off {
		return m.askHedgingOff(r)
	}
	delay := r.policy.delay
	u := engine.HedgeUpdate{Method: t.method, Delay: &delay}
	what := fmtDelay(r.f.Delay) + " (fixed)"
	if r.policy.quantile > 0 {
		q := r.policy.quantile
		u.Quantile = &q
		what = fmt.Sprintf("auto at %s (%s now; it follows the distribution)", quantileLabel(q), fmtDelay(r.f.Delay))
	}
	if !t.dist.Hedge.Enabled {
		on := true
		u.Enabled = &on
		what += ", hedging on"
	}
	q := fmt.Sprintf("Set the hedge delay of %s to %s? The model predicts: %s of requests fire a hedge, p99 %s, p99.9 %s, extra upstream load %s",
		t.method, what, pctText(r.f.FireRate), boundText(r.f.P99, r.f.Open[2]), boundText(r.f.P999, r.f.Open[3]), pctText(r.f.ExtraLoad))
	if cur := t.currentRow(); cur != nil {
		q += fmt.Sprintf(" (now: p99 %s, %s fire)", boundText(cur.f.P99, cur.f.Open[2]), pctText(cur.f.FireRate))
	}
	if r.f.Open[2] || r.f.Open[3] {
		q += " (≥: a lower bound: " + lowerBoundWhy + ")"
	}
	q += "."
	if r.f.BudgetCapped {
		q += fmt.Sprintf(" The hedge budget (%g of requests) caps the firing: the prediction counts that.", t.dist.Hedge.Budget)
	}
	q += " Logged as a console action; the view then shows the measured p99 beside this prediction."
	desc := "hedge delay of " + t.method + " → " + r.label()
	if d := fmtDelay(r.f.Delay); d != r.label() {
		desc += " (" + d + ")" // an auto row's delay now; a round row's label is its delay
	}
	a := action{kind: actHedge, hedge: u, desc: desc}
	m.confirm = confirmDialog{question: q, act: a, back: overlayTuning}
	m.overlay = overlayConfirm
	return m, nil
}

// askHedgingOff asks before turning the method's hedging off, stating
// what the model predicts without it beside what it runs with now.
func (m Model) askHedgingOff(r tuningRow) (tea.Model, tea.Cmd) {
	t := m.tuning
	off := false
	q := fmt.Sprintf("Turn hedging of %s off? The model predicts: p99 %s, p99.9 %s, no extra upstream load",
		t.method, boundText(r.f.P99, r.f.Open[2]), boundText(r.f.P999, r.f.Open[3]))
	if cur := t.currentRow(); cur != nil {
		q += fmt.Sprintf(" (now: p99 %s, %s fire, extra load %s)", boundText(cur.f.P99, cur.f.Open[2]), pctText(cur.f.FireRate), pctText(cur.f.ExtraLoad))
	}
	if r.f.Open[2] || r.f.Open[3] {
		q += " (≥: a lower bound: " + lowerBoundWhy + ")"
	}
	q += ". Logged as a console action; enter on a delay row of this view turns it back on."
	a := action{kind: actHedge, hedge: engine.HedgeUpdate{Method: t.method, Enabled: &off}, desc: "hedging of " + t.method + " → off"}
	m.confirm = confirmDialog{question: q, act: a, back: overlayTuning}
	m.overlay = overlayConfirm
	return m, nil
}

func (t tuningView) currentRow() *tuningRow {
	for i := range t.rows {
		if t.rows[i].policy.current {
			return &t.rows[i]
		}
	}
	return nil
}

// lowerBoundWhy says why a figure is a lower bound, of every kind the
// forecast gives (which the admin API's forecast does not tell apart):
// censoring ends the data before it (no answer past it), dominates before
// it (the horizon), or leaves too few answers past it to place it (Thin,
// the low end of its interval). One line at 80 columns.
const lowerBoundWhy = "censoring leaves too few answers past it"

// bestP99Slack is how far above the lowest predicted p99 a row still
// counts as as good: the model's figures are estimates, and a p99 lower by
// a hair is not worth more hedges (the tail seed: the decision is not one
// p99 figure but p99 against its cost).
const bestP99Slack = 0.05

// recommended is, among the rows the budget does not cap, the one with the
// least extra load whose predicted p99 is within bestP99Slack of the
// lowest (ties: the lower p99); -1 if none.
func (t tuningView) recommended() int {
	eligible := func(r tuningRow) bool {
		return r.f.Samples > 0 && !r.f.BudgetCapped && r.f.P99 > 0 && !r.f.Open[2]
	}
	var lowest time.Duration
	for _, r := range t.rows {
		if eligible(r) && (lowest == 0 || r.f.P99 < lowest) {
			lowest = r.f.P99
		}
	}
	best := -1
	for i, r := range t.rows {
		if !eligible(r) || float64(r.f.P99) > (1+bestP99Slack)*float64(lowest) {
			continue
		}
		if b := t.rows[max(best, 0)]; best < 0 || r.f.ExtraLoad < b.f.ExtraLoad || r.f.ExtraLoad == b.f.ExtraLoad && r.f.P99 < b.f.P99 {
			best = i
		}
	}
	return best
}

func msText(d time.Duration) string { return strings.TrimSpace(fmtMS(d)) }

// boundText is a predicted latency as the table shows it: "≥" when it is a
// lower bound.
func boundText(d time.Duration, open bool) string {
	if open && d > 0 {
		return "≥" + msText(d)
	}
	return msText(d)
}

// pctText prints a share as a percentage: one decimal below 10 %, none
// above. Its ends are kept for what they say: "0%" for none and "100%" for
// all; a share short of all that rounds to 100 (698 errors of 700
// requests) reads 99.9% at most, and one above none that rounds to 0 reads
// "<0.1%".
func pctText(v float64) string {
	if v > 0 && v < 0.0005 {
		return "<0.1%"
	}
	if v < 1 && 100*v >= 99.5 {
		return fmt.Sprintf("%.1f%%", math.Floor(1000*v)/10)
	}
	if v > 0 && 100*v < 9.95 {
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}
