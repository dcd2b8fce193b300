package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/rpcdash/rpcdash/engine"
)

// headerLines are the pool at a glance. Items flow onto as many lines as
// the width needs: the header is never cut off. Every item, the gaps
// between them and the rest of each line are drawn on the bar's
// background (an item's colour reset would otherwise end the bar after it).
func (m Model) headerLines() []string {
	st, s := m.styles, m.snap
	h := st.hdr
	now := m.opts.Now()
	var items []string
	items = append(items, h.accent.Render("rpcdash"))
	if m.opts.Source.Attached != "" {
		items = append(items, h.text.Render("attached "+m.opts.Source.Attached))
	} else {
		items = append(items, h.text.Render("rpc "+m.opts.Source.RPC), h.text.Render("admin "+m.opts.Source.Admin))
	}
	if m.haveSnap {
		items = append(items, h.text.Render(s.Chain), h.text.Render("up "+fit(fmtAge(s.Time.Sub(s.Started)), 6)))
		if s.Demo.Enabled {
			items = append(items, h.warn.Render(fmt.Sprintf("demo load %g/s", s.Demo.Rate)))
		}
		items = append(items,
			// Fixed widths: a header that rewraps between ticks would
			// move everything below it.
			h.text.Render("client "+fit(strings.TrimSpace(fmtRate(s.Client.PerSecond))+" req/s", 10)),
			h.text.Render("p50 "+fit(strings.TrimSpace(fmtMS(s.Client.P50)), 6)+"p99 "+fit(strings.TrimSpace(fmtMS(s.Client.P99))+" (1m)", 10)),
			clientErrorsItem(s.Client, h),
			m.hedgeItem(),
			h.text.Render(budgetItem(s.Hedge)),
			h.text.Render(ampItem(s.Client)),
			// Against the endpoints that may answer: a shadow never does
			// (its row says SHD), so it does not count as one missing.
			h.text.Render(fmt.Sprintf("%d/%d routable", s.Routable, s.Serving())),
		)
	}
	switch {
	// The snapshot's age and FROZEN take the same width, so that p keeps
	// the header on its lines (the status line says p resumes); STALE's
	// age counts up in a fixed width and its error has its own bounded
	// width, so that the header keeps its lines while it lasts.
	case m.frozen:
		items = append(items, st.banner.Render(" FROZEN "+fit(fmtAgeCoarse(now.Sub(m.frozenAt)), 3)))
	case m.fetchErr != nil:
		items = append(items, m.staleItems()...)
	case m.haveSnap:
		items = append(items, h.faint.Render(fit("snapshot "+fmtAgeCoarse(m.engineNow().Sub(s.Time)), ageItemWidth)))
	}
	return flow(items, m.width, h.text)
}

// staleItems are STALE, its age and the refresh error: one item where it
// fits on a line, else (80 columns) two, STALE and the error each whole
// on its line: one item wider than the line was wrapped mid-word
// ("· reconne" / "cting").
func (m Model) staleItems() []string {
	st, h := m.styles, m.styles.hdr
	stale := st.banner.Render(" STALE " + fit(fmtAge(m.staleFor()), 6))
	why := h.err.Render(fit(m.staleReason(), staleErrWidth)) + h.faint.Render(" · reconnecting")
	if one := stale + h.text.Render(" ") + why; lipgloss.Width(one) <= m.width {
		return []string{one}
	}
	return []string{stale, why}
}

// staleReason is the refresh error without the attached URL, which the
// header's "attached …" item already names: a fleet host's URL
// ("http://rpcdash-eu-west-1-prod-07.internal:8546 unreachable: connection
// refused") took the bounded width before the reason was said.
func (m Model) staleReason() string {
	s := m.fetchErr.Error()
	if a := m.opts.Source.Attached; a != "" && strings.Contains(s, a) {
		s = strings.Replace(s, a, "", 1)
		s = strings.TrimPrefix(strings.TrimSpace(s), ": ")
	}
	return s
}

// clientErrorsItem is how many requests of the last minute got rpcdash's
// own error, and their share: red when any, so that an operator sees a
// drill or an incident reach clients. Fixed width, as the items before it.
func clientErrorsItem(c engine.ClientStats, h headerStyles) string {
	if c.Errors == 0 {
		return h.text.Render("err " + fit("0", errItemWidth))
	}
	v := float64(c.Errors) / float64(max(c.Requests, c.Errors))
	item := fmtCount(c.Errors) + " " + pctText(v)
	if len(item) > errItemWidth {
		// "1.2k 99.9%": the share short of all, floored to a whole one.
		item = fmtCount(c.Errors) + " " + fmt.Sprintf("%.0f%%", math.Floor(100*v))
	}
	return h.err.Render("err " + fit(item, errItemWidth))
}

// errItemWidth holds a count and a share whole, "1.2k 100%" (every request
// of a minute failing, at 20/s) and "999 <0.1%": at 8 the first read
// "1.2k 10…". The cell it takes is the p99 item's spare one.
const errItemWidth = 9

// fmtCount prints a count in at most 4 cells: 999, 1.2k, 12k, 999k, 1.2M.
func fmtCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// hedgeItem is hedging's state in one width, whichever it is (a live
// delay is written without "on" to fit it): "+" turning "auto p95" into a
// delay, or "h" turning it off, must not rewrap the header. A delay of
// 1.25s set in config is the one form a cell wider.
func (m Model) hedgeItem() string {
	h, st := m.snap.Hedge, m.styles.hdr
	switch {
	case !h.Enabled:
		return st.warn.Render(fit("hedging OFF", hedgeItemWidth))
	case h.Paused:
		return st.warn.Render(fit("hedging PAUSED", hedgeItemWidth))
	case h.Delay != engine.AutoDelay:
		return st.text.Render(fit("hedging "+strings.TrimSpace(fmtDelay(h.Delay))+" "+h.DelaySource, hedgeItemWidth))
	}
	item := "hedging on auto " + quantileLabel(h.Quantile)
	if len(item) > hedgeItemWidth {
		item = "hedging auto " + quantileLabel(h.Quantile) // p99.9
	}
	return st.text.Render(fit(item, hedgeItemWidth))
}

// hedgeItemWidth is every hedging state's: "hedging 12.5ms live" and
// "hedging on auto p95" are 19, "hedging 125ms config" 20; staleErrWidth
// is what a refresh error may take of the header ("dial tcp
// 127.0.0.1:8546: connect: connection refused" is 55, "HTTP 404, not an
// rpcdash answer, from /v1/status?compact=1" 58).
const (
	hedgeItemWidth = 20
	staleErrWidth  = 58
)

// ageItemWidth is the snapshot age's and FROZEN's (" FROZEN 12s"): at
// 120 columns the second header line holds it with a live delay too.
const ageItemWidth = 11

// flow lays items out left to right, two spaces apart, wrapping between
// items; an item wider than a line is wrapped on its own. The gaps and
// the end of each line are drawn in bar, the header's style.
func flow(items []string, width int, bar lipgloss.Style) []string {
	var lines []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case lipgloss.Width(cur)+2+lipgloss.Width(it) <= width:
			cur += bar.Render("  ") + it
		default:
			lines = append(lines, cur)
			cur = it
		}
		for lipgloss.Width(cur) > width {
			wrapped := strings.Split(wrap(cur, width), "\n")
			lines = append(lines, wrapped[:len(wrapped)-1]...)
			cur = wrapped[len(wrapped)-1]
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	for i, l := range lines {
		l = strings.TrimRight(l, " ") // wrap pads with unstyled blanks
		if w := lipgloss.Width(l); w < width {
			l += bar.Render(strings.Repeat(" ", width-w))
		}
		lines[i] = l
	}
	return lines
}

// bannerLines shout what an operator must see first.
func (m Model) bannerLines() []string {
	if !m.haveSnap {
		return nil
	}
	var out []string
	// The reasons the endpoints are out get lines of their own, so that a
	// long headline never cuts them off.
	noRoute := func() {
		out = append(out, m.banner("⚠ NO ROUTABLE ENDPOINT: requests fail now"+m.noRouteRemedy()+".")...)
		out = append(out, m.banner(m.outReasons(true))...)
	}
	switch s := m.snap; {
	case s.Routable == 0 && len(s.Endpoints) > 0 && s.LastResort == 0:
		// Panic routing or not, no endpoint can be sent a request.
		noRoute()
	case s.Routable == 0 && len(s.Endpoints) > 0 && !s.Panic:
		noRoute()
	default:
		// Reads still flow: to every endpoint not drained or refusing,
		// least bad first (or panic routing is over, held a while).
		out = append(out, m.panicBanner()...)
	}
	if m.snap.StandbyActive {
		var names []string
		for _, ep := range m.snap.Endpoints {
			if ep.Role == engine.RoleStandby || ep.Role == engine.RoleCanary {
				names = append(names, ep.Name)
			}
		}
		verb := "takes"
		if len(names) > 1 {
			verb = "take"
		}
		out = append(out, m.banner(fmt.Sprintf("⚠ STANDBY IN USE: %s; standby %s %s client traffic until the primaries recover.",
			m.snap.StandbyReason, strings.Join(names, ", "), verb))...)
	}
	out = append(out, m.failingBanner()...)
	return append(out, m.slowdownBanner()...)
}

// noRouteRemedy is what the operator can undo from here when nothing is
// routable: a drain or an injected fault of theirs (the keys act on the
// selected endpoint; one line at 80 columns).
func (m Model) noRouteRemedy() string {
	var drained, faulted bool
	for _, ep := range m.snap.Endpoints {
		drained = drained || ep.Drained
		faulted = faulted || ep.Fault != nil
	}
	var do []string
	if drained {
		do = append(do, "d undrains")
	}
	if faulted {
		do = append(do, "c clears a fault")
	}
	if len(do) == 0 || m.opts.ReadOnly {
		return ""
	}
	return "; " + strings.Join(do, ", ")
}

// banner is msg on at most two lines; a cut one ends in "…".
func (m Model) banner(msg string) []string { return m.bannerIn(m.styles.banner, msg, 2) }

// outReasons names each endpoint that takes no traffic and why (every
// endpoint when all is true: none does).
func (m Model) outReasons(all bool) string {
	var why []string
	for _, ep := range m.snap.Endpoints {
		if all || !ep.Routable {
			why = append(why, ep.Name+": "+notRoutableReason(ep, m.snap))
		}
	}
	return strings.Join(why, "; ")
}

// notRoutableReason names the first reason an endpoint takes no traffic.
func notRoutableReason(ep engine.EndpointSnapshot, s engine.Snapshot) string {
	switch {
	case ep.Role == engine.RoleShadow:
		return "shadow (mirrors only)"
	case ep.Drained:
		return "drained"
	case ep.Refusing && ep.Breaker.State != engine.BreakerClosed:
		return "refusing connections (breaker " + ep.Breaker.State.String() + ")"
	case ep.Breaker.State != engine.BreakerClosed:
		return "breaker " + ep.Breaker.State.String()
	case !ep.BackoffUntil.IsZero():
		return "backing off after 429"
	case s.CatchingUp(ep):
		return s.RejoiningText(ep)
	case ep.LagExcluded:
		return fmt.Sprintf("lagging %d behind", ep.Lag)
	case len(ep.Exclusions) > 0:
		return ep.Exclusions[0]
	}
	return "not routable"
}

// budgetItem is the hedge budget spent out of what it may hold now. The
// cap (the burst plus the last 10 s of deposits) is fractional; it is
// shown rounded up, so what is spent never reads as more than the cap.
// Past 100 units the tenths go, past 1000 the figures are in thousands,
// and "used" goes before a figure is cut: at 120 reads/s the cap is over
// 100 and "budget used 114.6/…" hid it.
//
// A hedge needs both of the budget's buckets (cost units and requests):
// the one more spent is shown, the requests' marked "req", since the
// cost units alone read as room while the requests held every hedge back.
// The requests' is shown only when it is more spent by a tenth of its
// size or more: with both nearly full, the item changed its figure, its
// unit and its words from one refresh to the next (0.0/45, then 1.0/30
// req) while nothing had changed.
func budgetItem(h engine.HedgeStatus) string {
	capacity, tokens, unit := max(h.BudgetCap, h.BudgetBurst), h.BudgetTokens, ""
	if reqCap := max(h.BudgetRequestCap, h.BudgetBurst); h.BudgetRequestCap > 0 && capacity > 0 &&
		(reqCap-h.BudgetRequestTokens)/reqCap >= (capacity-tokens)/capacity+budgetShownMargin {
		capacity, tokens, unit = reqCap, h.BudgetRequestTokens, " req"
	}
	spent, limit := fmtUnits(capacity-tokens, false), fmtUnits(math.Ceil(capacity), true)
	s := "budget used " + spent + "/" + limit + unit
	if len(s) > budgetWidth {
		s = "budget " + spent + "/" + limit + unit
	}
	return fit(s, budgetWidth)
}

const budgetWidth = 19

// budgetShownMargin is how much more spent (a share of its size) the
// requests' bucket must be for the header to show it.
const budgetShownMargin = 0.1

// fmtUnits prints budget units in at most 4 cells: 2.5, then as fmtCount
// does (115, 1.2k, 12k).
func fmtUnits(x float64, whole bool) string {
	if x < 100 && !whole {
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return fmtCount(int64(math.Round(x)))
}

// ampItem is the last minute's amplification, upstream attempts per client
// request, beside the minute's latencies (since start, it kept the hedges
// of a delay long since raised); "—" in a minute with no request.
func ampItem(c engine.ClientStats) string {
	if c.Requests == 0 {
		return fit("amp "+dash, 10)
	}
	return fmt.Sprintf("amp %4.2f×", c.Amplification)
}
