package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// detailLines describe the selected endpoint, the most urgent first: a
// pane or box too short for them all cuts the end, so its fault,
// exclusions and last errors come before the routing score, where it
// lives and what it shares with others.
func (m Model) detailLines(width int) []string {
	ep, ok := m.selected()
	if !ok {
		return []string{m.styles.faint.Render("no endpoint")}
	}
	st := m.styles
	var out []string
	add := func(s string) {
		for _, l := range strings.Split(wrap(s, width), "\n") {
			out = append(out, fit(strings.TrimRight(l, " "), width))
		}
	}
	title := st.title.Render(ep.Name) + "  " + strings.Trim(ep.Provider+"/"+ep.Region, "/") + "  " + ep.URL
	switch ep.Proxy {
	case "":
	case engine.ProxyFromEnv:
		title += "  via the environment's proxy"
	default:
		title += "  via proxy " + ep.Proxy
	}
	add(title)
	b := ep.Breaker
	line := "breaker " + m.stateCell(ep)
	switch b.State {
	case engine.BreakerOpen:
		line += fmt.Sprintf("  next trial in %s (cooldown %s, reopened %d×", fmtLeft(b.NextTrialAt.Sub(m.engineNow())), b.Cooldown, b.Reopens)
		if b.Flaps > 0 {
			line += fmt.Sprintf(", flapping %d×", b.Flaps)
		}
		line += ")"
	case engine.BreakerHalfOpen:
		line += "  " + engine.Count(b.TrialSuccesses, "trial success") + " so far"
	default:
		line += "  " + engine.Count(b.ConsecutiveFailures, "consecutive failure")
		if b.HeldClosed {
			line += st.warn.Render("  held closed by breaker.max_open_share: it failed enough to open, but breakers may not take more of the pool out; ranked last")
		}
	}
	if ep.Drained {
		line += "  " + st.drained.Render("DRAINED")
	}
	add(line)
	if why := m.breakerWhy(ep); why != "" {
		// Wrapped under its own first word: a continuation at the left
		// edge read as a line of its own ("HTTP 500; cooldown 10s").
		const head = "  why: "
		for i, l := range strings.Split(wrap(why, width-len(head)), "\n") {
			lead := strings.Repeat(" ", len(head))
			if i == 0 {
				lead = st.faint.Render(head)
			}
			out = append(out, fit(lead+strings.TrimRight(l, " "), width))
		}
	}
	if l := roleLine(ep); l != "" {
		add(l)
	}
	if f := ep.Fault; f != nil {
		left := "until cleared"
		if !f.Expires.IsZero() {
			left = fmtLeft(f.Expires.Sub(m.engineNow())) + " left"
		}
		what := string(f.Mode)
		if f.Mode == engine.FaultLatency {
			what += " +" + fmtDelay(f.Latency)
		}
		add(st.fault.Render("fault: ") + fmt.Sprintf("%s on %s of requests, %s", what, pctText(f.Rate), left))
	}
	for _, x := range ep.Exclusions {
		add(st.err.Render("excluded: ") + x)
	}
	for _, l := range m.methodMarkLines(ep) {
		add(l)
	}
	// The first error shares the heading's line: a cut never leaves the
	// heading without one. Each is indented under the first, wrapped too.
	const heading = "last errors: "
	// The same error in a row is one entry, counted: five lines of
	// "injected fault: HTTP 500" pushed the score and independence out of
	// an 80×24 box.
	for i, n := 0, 0; i < len(ep.Errors); i += n {
		e := ep.Errors[i]
		for n = 1; i+n < len(ep.Errors) && ep.Errors[i+n].Text == e.Text; n++ {
		}
		entry := st.faint.Render(e.Time.In(m.opts.Location).Format("15:04:05")) + " " + st.err.Render(e.Text)
		if n > 1 {
			entry += st.faint.Render(fmt.Sprintf(" (the %d before it too, back to %s)", n-1, ep.Errors[i+n-1].Time.In(m.opts.Location).Format("15:04:05")))
		}
		for j, l := range strings.Split(wrap(entry, width-len(heading)), "\n") {
			head := strings.Repeat(" ", len(heading))
			if i == 0 && j == 0 {
				head = heading
			}
			out = append(out, fit(head+strings.TrimRight(l, " "), width))
		}
	}
	if len(ep.Errors) == 0 {
		add(st.faint.Render("no errors"))
	}
	if sh := ep.Shadow; sh != nil {
		add(m.shadowLine(sh))
	}

	method, score := m.selectedMethod(), ep.Score
	if ms, ok := ep.Methods[method]; ok && method != "" {
		score = ms.Score
	} else {
		method = "all methods"
	}
	add(fmt.Sprintf("score (%s): cost %s = (latency %s [%s] + 0.01ms) × errors %.2f (%s) × tail %.2f (%s of attempts in the tail) × %s + lag %s (%d behind)",
		method, fmtDelay(score.Cost), fmtDelay(score.Latency), score.LatencySource, score.ErrorFactor, failedShare(ep, score),
		score.TailFactor, pctText(score.TailShare), loadText(score), fmtDelay(score.LagCost), score.Lag))
	if l := latencyLine(ep.Latency); l != "" {
		if failed, silent := silentMinute(ep); silent {
			l += fmt.Sprintf("; none in the last %s (%s failed): these are of its answers before", fmtSpan(time.Duration(len(ep.Series))*time.Second), engine.Count(failed, "attempt"))
		}
		add(l)
	}
	if ep.BatchRoundTrips > 0 {
		// The latency columns are single calls' and probes': a client sending
		// only batches leaves them empty.
		add(fmt.Sprintf("upstream batches: median round trip %s over %d (what orders a batch's endpoints)", fmtDelay(ep.BatchPace), ep.BatchRoundTrips))
	}
	if in := ep.Independence; in != nil {
		add("IPs " + orDash(strings.Join(in.IPs, " ")) + "  ASN " + orDash(strings.Join(in.ASNs, ", ")) + "  TLS " + orDash(in.TLSIssuer))
		if in.Error != "" {
			add(st.warn.Render("check: " + in.Error))
		}
	} else {
		add(st.faint.Render("independence: not checked yet"))
	}
	for _, w := range m.snap.Warnings {
		for _, n := range w.Endpoints {
			switch {
			case n != ep.Name || w.Reason == "pool":
			case w.Reason == "asn-unknown":
				add(st.faint.Render("independence: ") + w.Text)
			default:
				add(st.warn.Render("shared fate: ") + w.Text)
			}
		}
	}
	return out
}

// detailPane is the detail beside the methods in rows lines: when it is
// cut, its last line says how much and that enter shows it all.
func (m Model) detailPane(width, rows int) string {
	lines := m.detailLines(width)
	if len(lines) > rows && rows > 0 {
		more := len(lines) - rows + 1
		lines = append(lines[:rows-1], m.styles.faint.Render(fit(fmt.Sprintf("… %s: enter shows them all", engine.Count(more, "more line")), width)))
	}
	return strings.Join(lines, "\n")
}

// detailCut says whether the detail beside the methods cuts lines.
func (m Model) detailCut() bool {
	l := m.layout()
	if !l.inlineDetail {
		return false
	}
	_, rows, _ := m.panelRows(l, m.bodyRows())
	_, w := m.middleWidths()
	if l.borders {
		w -= 2
	}
	return len(m.detailLines(w)) > rows
}

// breakerWhy is the event that put the breaker where it is (open,
// half-open, or held closed by breaker.max_open_share), while the console
// still holds it: "" for a plain closed breaker.
func (m Model) breakerWhy(ep engine.EndpointSnapshot) string {
	state := ep.Breaker.State.String()
	for i := len(m.events) - 1; i >= 0; i-- {
		ev := m.events[i]
		if ev.Endpoint != ep.Name {
			continue
		}
		opened := ep.Breaker.State != engine.BreakerClosed && ev.Type == engine.EventBreaker && ev.To == state
		held := ep.Breaker.HeldClosed && ev.Type == engine.EventPool && ev.To == "open refused"
		if opened || held {
			return ev.From + "→" + ev.To + " " + ev.Time.In(m.opts.Location).Format("15:04:05") + ": " + ev.Message
		}
	}
	return ""
}

// methodMarkLines say until when a 429 back-off keeps the whole endpoint
// out, and which methods go first to other endpoints, why and until when:
// a 429 back-off of the method, a "cannot serve" answer, or a hang.
func (m Model) methodMarkLines(ep engine.EndpointSnapshot) []string {
	st := m.styles
	var out []string
	if !ep.BackoffUntil.IsZero() {
		out = append(out, st.warn.Render("429 back-off: ")+"the whole endpoint, no new traffic "+m.untilText(ep.BackoffUntil))
	}
	for _, name := range backedOffMethods(ep) {
		out = append(out, st.warn.Render("429 back-off: ")+name+", sent to the other endpoints "+m.untilText(ep.Methods[name].BackoffUntil))
	}
	for _, name := range cannotServeMethods(ep) {
		out = append(out, st.warn.Render("cannot serve: ")+name+", asked after the endpoints that can "+m.untilText(ep.Methods[name].CannotServeUntil))
	}
	for _, name := range hungMethods(ep) {
		out = append(out, st.warn.Render("hung: ")+name+" unanswered past its deadline, asked after the others "+m.untilText(ep.Methods[name].HungUntil))
	}
	return out
}

// untilText is "until 12:00:10 (10s left)".
func (m Model) untilText(t time.Time) string {
	return "until " + t.In(m.opts.Location).Format("15:04:05") + " (" + fmtLeft(t.Sub(m.engineNow())) + " left)"
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

// roleLine says what a role other than primary means for traffic.
func roleLine(ep engine.EndpointSnapshot) string {
	switch ep.Role {
	case engine.RoleStandby:
		return "role standby: client traffic only when the primaries cannot take it"
	case engine.RoleCanary:
		return "role canary: " + engine.ShareLabel(ep.Share) + " of reads' first attempts, otherwise a standby"
	case engine.RoleShadow:
		return "role shadow: answers no client; " + engine.ShareLabel(ep.Share) + " of reads mirrored and compared"
	}
	return ""
}

// shadowLine is a shadow's comparison with the answers clients got.
func (m Model) shadowLine(sh *engine.ShadowSnapshot) string {
	st := m.styles
	rate := st.faint.Render("match —")
	if n := sh.Match + sh.Mismatch + sh.Errors; n > 0 {
		style := st.ok
		if sh.MatchRate < 1 {
			style = st.warn
		}
		rate = style.Render(fmt.Sprintf("match %.1f%%", 100*sh.MatchRate))
	}
	s := fmt.Sprintf("shadow %s  mirrored %d  compared %d: %d match, %d mismatch, %d tip, %d errors, %d dropped  p50/p95 %s/%s (answering %s/%s)",
		rate, sh.Mirrored, sh.Compared, sh.Match, sh.Mismatch, sh.Tip, sh.Errors, sh.Dropped,
		fmtDelay(sh.P50), fmtDelay(sh.P95), fmtDelay(sh.PrimaryP50), fmtDelay(sh.PrimaryP95))
	if lm := sh.LastMismatch; lm != nil {
		s += fmt.Sprintf("  last mismatch %s %s ago", lm.Method, fmtSpan(m.engineNow().Sub(lm.At).Round(1e9)))
	}
	return s
}

// failedShare is what the score's error factor weighs: the failed share of
// the window's attempts, or, while they are too few to weigh, the ERR%
// share it leaves to the breaker.
func failedShare(ep engine.EndpointSnapshot, score engine.ScoreParts) string {
	if score.Attempts < score.MinAttempts {
		return fmt.Sprintf("%.1f%% of %s failed: not weighed below %d", 100*ep.Rates.ErrorRate, engine.Count(ep.Rates.Verdicts(), "attempt"), score.MinAttempts)
	}
	return fmt.Sprintf("%.1f%% of %s failed", 100*score.FailureRate, engine.Count(score.Attempts, "attempt"))
}

// latencyLine is the endpoint's latency percentiles over the stats window,
// a lower bound marked "≥" (its attempts cut short when another won ran
// past it, and the answers end before it); "" before any answer.
func latencyLine(l engine.LatencyStats) string {
	if l.Count == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("latency")
	for i, name := range [...]string{engine.PctP50: "p50", engine.PctP90: "p90", engine.PctP95: "p95", engine.PctP99: "p99", engine.PctP999: "p99.9"} {
		fmt.Fprintf(&b, " %s %s", name, boundText(l.Percentile(i), l.LowerBound(i)))
	}
	fmt.Fprintf(&b, " over %s", engine.Count(l.Count, "answer"))
	if l.Censored > 0 {
		fmt.Fprintf(&b, ", %d cut short", l.Censored)
	}
	if slices.Contains(l.Open[:], true) {
		b.WriteString(" (≥ a lower bound: the attempts cut short ran past it)")
	}
	return b.String()
}

// loadText is the score's load factor with what it is made of: the
// requests in flight, and, when the endpoint is credited with answering
// several at once at its pace (the quickest by far), how many (the factor
// is 1 + in flight ÷ that).
func loadText(score engine.ScoreParts) string {
	if score.Concurrency <= 1 {
		return fmt.Sprintf("load %.0f (%d in flight)", score.LoadFactor, score.InFlight)
	}
	return fmt.Sprintf("load %.2f (%d in flight ÷ %d answered at once)", score.LoadFactor, score.InFlight, score.Concurrency)
}
