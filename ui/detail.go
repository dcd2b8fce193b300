package ui

import (
	"fmt"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
)

// detailLines describe the selected endpoint: why it ranks where it does,
// where it lives, what it shares with others, its fault, exclusions and
// last errors.
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
	add(st.title.Render(ep.Name) + "  " + strings.Trim(ep.Provider+"/"+ep.Region, "/") + "  " + ep.URL)
	b := ep.Breaker
	line := "breaker " + m.stateCell(ep)
	switch b.State {
	case engine.BreakerOpen:
		line += fmt.Sprintf("  next trial in %s (cooldown %s, reopened %d×", fmtLeft(b.NextTrialAt.Sub(m.opts.Now())), b.Cooldown, b.Reopens)
		if b.Flaps > 0 {
			line += fmt.Sprintf(", flapping %d×", b.Flaps)
		}
		line += ")"
	case engine.BreakerHalfOpen:
		line += fmt.Sprintf("  %d trial successes so far", b.TrialSuccesses)
	default:
		line += fmt.Sprintf("  %d consecutive failures", b.ConsecutiveFailures)
	}
	if ep.Drained {
		line += "  " + st.drained.Render("DRAINED")
	}
	add(line)

	method, score := m.selectedMethod(), ep.Score
	if ms, ok := ep.Methods[method]; ok && method != "" {
		score = ms.Score
	} else {
		method = "all methods"
	}
	add(fmt.Sprintf("score (%s): cost %s = (latency %s [%s] + 0.01ms) × errors %.2f (%.1f%% failed) × load %.0f (%d in flight) + lag %s (%d behind)",
		method, fmtDelay(score.Cost), fmtDelay(score.Latency), score.LatencySource, score.ErrorFactor, 100*score.FailureRate,
		score.LoadFactor, score.InFlight, fmtDelay(score.LagCost), score.Lag))
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
	if f := ep.Fault; f != nil {
		left := "until cleared"
		if !f.Expires.IsZero() {
			left = fmtLeft(f.Expires.Sub(m.opts.Now())) + " left"
		}
		what := string(f.Mode)
		if f.Mode == engine.FaultLatency {
			what += " +" + fmtDelay(f.Latency)
		}
		add(st.fault.Render("fault: ") + fmt.Sprintf("%s on %.0f%% of requests, %s", what, 100*f.Rate, left))
	}
	for _, x := range ep.Exclusions {
		add(st.err.Render("excluded: ") + x)
	}
	if len(ep.Errors) == 0 {
		add(st.faint.Render("no errors"))
	} else {
		add("last errors:")
		for _, e := range ep.Errors {
			add("  " + st.faint.Render(e.Time.In(m.opts.Location).Format("15:04:05")) + " " + st.err.Render(e.Text))
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}
