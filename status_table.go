package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rpcdash/rpcdash/engine"
)

// The endpoint table of `rpcdash status` carries the failover seed's results
// table ("结果表": name, provider, region, median and p95 RTT, head lag,
// error rate, notes), with the p99 and the breaker beside them, so that an
// operator recording the seed's measurements reads them off as they are.
// ERR% and 429% are shares of the attempts that reached a verdict
// (RateStats.Verdicts: not those let go of because another won). 429% is
// the share answered HTTP 429 (the console's 429 %,
// RateStats.RateLimitedShare), which ERR% does not count: the hedging seed
// asks for the 429 rate beside the latencies. The table has it beside
// ERR%; the CSV appends it after NOTES (csvColumns), so that the columns a
// recording script reads by position stay where they were.
var endpointColumns = []string{"ENDPOINT", "PROVIDER", "REGION", "P50ms", "P95ms", "P99ms", "LAG", "ERR%", "429%", "STATE", "NOTES"}

// csvColumns are the CSV's: the table's before 429% was added, then 429%,
// then LOWER_BOUNDS, the latency columns censoring leaves lower bounds
// ("P95ms P99ms"; empty when none), the figures staying plain numbers.
var csvColumns = []string{"ENDPOINT", "PROVIDER", "REGION", "P50ms", "P95ms", "P99ms", "LAG", "ERR%", "STATE", "NOTES", "429%", "LOWER_BOUNDS"}

// defaultWidth is the table's width when COLUMNS does not say.
const defaultWidth = 120

// latencyColumns are the table's latency figures, with their percentiles.
var latencyColumns = []struct {
	name string
	pct  int
}{{"P50ms", engine.PctP50}, {"P95ms", engine.PctP95}, {"P99ms", engine.PctP99}}

// endpointRow is one endpoint's cells, in endpointColumns' order; marked,
// a latency figure that is only a lower bound reads "≥" before it (the
// endpoint's slow attempts were cut short when another won). A figure
// with nothing under it (no answer in the stats window, no attempt, no
// head seen, or none for three probe intervals: LagUnknown) is none ("-"
// in the table, empty in the CSV), as the console's "—": 0.0 ms, LAG 0 and
// ERR% 0.0 read as a fast, synced, healthy endpoint when it had never
// answered.
func endpointRow(s engine.Snapshot, ep engine.EndpointSnapshot, marked bool) []string {
	none := ""
	if marked {
		none = "-"
	}
	r := []string{ep.Name, orDash(ep.Provider), orDash(ep.Region)}
	for _, c := range latencyColumns {
		d := ep.Latency.Percentile(c.pct)
		cell := fmt.Sprintf("%.1f", msOf(d))
		switch {
		case d <= 0:
			cell = none
		case marked && ep.Latency.LowerBound(c.pct):
			cell = "≥" + cell
		}
		r = append(r, cell)
	}
	lag := strconv.FormatInt(ep.Lag, 10)
	if ep.Head <= 0 || ep.LagUnknown(s) {
		lag = none // the engine's lag is 0 until a head is known, and carried on while none is seen
	}
	errRate := fmt.Sprintf("%.1f", 100*ep.Rates.ErrorRate)
	if ep.Rates.Verdicts() <= 0 {
		errRate = none
	}
	return append(r, lag, errRate, rate429(ep, none), endpointState(ep), "")
}

// rate429 is the 429% cell, none without an attempt that reached a verdict.
func rate429(ep engine.EndpointSnapshot, none string) string {
	if ep.Rates.Verdicts() <= 0 {
		return none
	}
	return fmt.Sprintf("%.1f", 100*ep.Rates.RateLimitedShare())
}

// lowerBounds names the latency columns that are lower bounds.
func lowerBounds(ep engine.EndpointSnapshot) string {
	var out []string
	for _, c := range latencyColumns {
		if ep.Latency.LowerBound(c.pct) {
			out = append(out, c.name)
		}
	}
	return strings.Join(out, " ")
}

// endpointState is the breaker's state, and drained when it is.
func endpointState(ep engine.EndpointSnapshot) string {
	s := ep.Breaker.State.String()
	if ep.Drained {
		s += ",drained"
	}
	return s
}

// endpointNotes are the role, what keeps it out of routing that STATE does
// not say (lag, as the console's LAGGING and REJOIN k/N; another chain, an
// unhealthy node, a head ahead of the pool), whether breaker.max_open_share
// holds its breaker closed (STATE says only closed; the console says HELD
// CLOSED), the fault in force and the last error (the engine's text,
// redacted), in that order. A lagging endpoint printed "closed" with its
// LAG and nothing saying that it took no read of the tip.
func endpointNotes(s engine.Snapshot, ep engine.EndpointSnapshot) []string {
	notes := []string{engine.RoleLabel(ep.Role, ep.Share)}
	if ep.LagExcluded {
		if s.CatchingUp(ep) {
			notes = append(notes, s.RejoiningText(ep))
		} else {
			notes = append(notes, fmt.Sprintf("lagging %d behind, more than chain.max_head_lag %d: out of tip-dependent reads", ep.Lag, s.MaxLag))
		}
	}
	for _, x := range ep.Exclusions {
		notes = append(notes, "excluded: "+x)
	}
	if ep.Breaker.State == engine.BreakerClosed && ep.Breaker.HeldClosed {
		notes = append(notes, "held closed by breaker.max_open_share (ranked last)")
	}
	if f := ep.Fault; f != nil {
		what := "fault " + string(f.Mode)
		if f.Mode == engine.FaultLatency {
			what += " +" + f.Latency.String()
		}
		if f.Rate < 1 {
			what += fmt.Sprintf(" on %.0f%%", 100*f.Rate)
		}
		notes = append(notes, what)
	}
	if ep.LastError != "" {
		notes = append(notes, "last error: "+ep.LastError)
	}
	return notes
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printEndpointTable prints the endpoint table in width columns: the notes
// are cut to fit (see fitNotes).
func printEndpointTable(w io.Writer, s engine.Snapshot, width int) {
	eps := s.Endpoints
	rows := [][]string{endpointColumns}
	for _, ep := range eps {
		rows = append(rows, endpointRow(s, ep, true))
	}
	widths := make([]int, len(endpointColumns)-1)
	for _, r := range rows {
		for c := range widths {
			widths[c] = max(widths[c], utf8.RuneCountInString(r[c]))
		}
	}
	for i, r := range rows {
		var b strings.Builder
		for c, cell := range r[:len(widths)] {
			pad := strings.Repeat(" ", widths[c]-utf8.RuneCountInString(cell))
			if c >= 3 && c <= 8 { // the figures, right-aligned
				b.WriteString(pad + cell + " ")
			} else {
				b.WriteString(cell + pad + " ")
			}
		}
		notes := r[len(widths)]
		if i > 0 {
			notes = fitNotes(endpointNotes(s, eps[i-1]), width-utf8.RuneCountInString(b.String()))
		}
		fmt.Fprintln(w, b.String()+notes)
	}
}

// fitNotes joins notes with "; " within room characters: the role always,
// then each note that fits whole; the first that does not is cut, marked
// with "…", when enough of it can be shown (the last error, typically),
// else only marked as left out.
func fitNotes(notes []string, room int) string {
	const minShown = 16
	out := notes[0]
	for _, n := range notes[1:] {
		if utf8.RuneCountInString(out)+2+utf8.RuneCountInString(n) <= room {
			out += "; " + n
			continue
		}
		switch rest := room - utf8.RuneCountInString(out) - 2; {
		case rest >= minShown:
			out += "; " + strings.TrimRight(string([]rune(n)[:rest-1]), " ") + "…"
		case utf8.RuneCountInString(out)+2 <= room:
			out += " …"
		}
		break
	}
	return out
}

// printEndpointCSV prints the same columns as CSV (429% last, see
// csvColumns), one row per endpoint, nothing cut: for recording
// measurements over time.
func printEndpointCSV(w io.Writer, s engine.Snapshot) error {
	cw := csv.NewWriter(w)
	cw.Write(csvColumns)
	for _, ep := range s.Endpoints {
		r := endpointRow(s, ep, false) // …, ERR%, 429%, STATE, NOTES
		state, notes := r[9], strings.Join(endpointNotes(s, ep), "; ")
		cw.Write(append(r[:8:8], state, notes, r[8], lowerBounds(ep)))
	}
	cw.Flush()
	return cw.Error()
}

// terminalWidth is COLUMNS when it holds a width, else defaultWidth.
func terminalWidth() int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}
