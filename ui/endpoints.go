package ui

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/rpcdash/rpcdash/engine"
)

// column is one column of a table: a fixed width (so nothing moves
// between ticks) and a rank in the order optional columns give way.
type column[T any] struct {
	title string
	width int
	right bool
	drop  int // 0 = never dropped; lower numbers go first
	cell  func(row T) string
}

// fitColumns drops optional columns, lowest rank first, until the row fits
// in width (one space between columns).
func fitColumns[T any](cols []column[T], width int) []column[T] {
	return fitColumnsUpTo(cols, width, math.MaxInt)
}

// fitColumnsUpTo is fitColumns letting only columns of drop rank up to
// maxRank go; the row may still be too wide.
func fitColumnsUpTo[T any](cols []column[T], width, maxRank int) []column[T] {
	for rowWidth(cols) > width {
		best := -1
		for i, c := range cols {
			if c.drop > 0 && c.drop <= maxRank && (best < 0 || c.drop < cols[best].drop) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		cols = slices.Delete(slices.Clone(cols), best, best+1)
	}
	return cols
}

// rowWidth is the width of a row of cols, one space between columns.
func rowWidth[T any](cols []column[T]) int {
	n := len(cols) - 1
	for _, c := range cols {
		n += c.width
	}
	return n
}

func renderRow[T any](cols []column[T], row T) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = cellText(c.cell(row), c.width, c.right)
	}
	return strings.Join(parts, " ")
}

func renderHead[T any](cols []column[T], st lipgloss.Style) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = cellText(c.title, c.width, c.right)
	}
	return st.Render(strings.Join(parts, " "))
}

// tableHead is a table's column-header line; marked, its first column (the
// cursor's, blank in the header) holds the focus marker ▶.
func tableHead[T any](cols []column[T], st styles, marked bool) string {
	if !marked {
		return renderHead(cols, st.faint)
	}
	return st.title.Render("▶") + st.faint.Render(" "+renderHead(cols[1:], lipgloss.NewStyle()))
}

// cellText fits styled text into exactly width cells.
func cellText(s string, width int, right bool) string {
	if right {
		return pad(s, width)
	}
	return fit(s, width)
}

// endpointColumns are the endpoint table's columns for this layout: those
// that fit.
func (m Model) endpointColumns(l layout) []column[engine.EndpointSnapshot] {
	return fitColumns(m.allEndpointColumns(l), l.content)
}

// allEndpointColumns are every column of the endpoint table, as wide as
// this layout makes them.
func (m Model) allEndpointColumns(l layout) []column[engine.EndpointSnapshot] {
	st := m.styles
	nameW := len("ENDPOINT")
	for _, ep := range m.snap.Endpoints {
		nameW = max(nameW, lipgloss.Width(ep.Name))
	}
	nameW = min(nameW, 16)
	// A lag or a head is never cut: 123456 cut to its 4 cells read 1234,
	// and lost the ! that says it is excluded; a garbage head of
	// 999999999999 read 9999999999.
	lagW, headW := 4, 10
	for _, ep := range m.snap.Endpoints {
		lagW = max(lagW, len(lagText(m.snap, ep)))
		headW = max(headW, len(fmt.Sprint(ep.Head)))
	}
	badgeW, short := 22, false
	switch {
	case l.content < 96:
		badgeW, short = 12, true
	case l.content < 120:
		badgeW = 17
	}
	indepW := 3
	if l.fullIndep {
		indepW = 10
	}
	shared := m.sharedFate()
	cols := []column[engine.EndpointSnapshot]{
		{title: " ", width: 1, cell: func(ep engine.EndpointSnapshot) string {
			if m.haveSnap && ep.Name == m.snap.Endpoints[clamp(m.epCursor, 0, len(m.snap.Endpoints)-1)].Name {
				return m.cursor(focusEndpoints)
			}
			return " "
		}},
		{title: "ENDPOINT", width: nameW, cell: func(ep engine.EndpointSnapshot) string { return fitName(ep.Name, nameW) }},
		{title: "PROVIDER/REGION", width: 16, drop: 1, cell: func(ep engine.EndpointSnapshot) string {
			return fit(strings.Trim(ep.Provider+"/"+ep.Region, "/"), 16)
		}},
		{title: "STATE", width: 11, cell: func(ep engine.EndpointSnapshot) string { return m.stateCell(ep) }},
		{title: "BADGES", width: badgeW, cell: func(ep engine.EndpointSnapshot) string { return m.badges(ep, badgeW, short) }},
		{title: sparkTitle(l.sparkWidth, m.sparkTop), width: l.sparkWidth, cell: func(ep engine.EndpointSnapshot) string {
			if sp := m.sparks[ep.Name]; sp != nil {
				return sp.view()
			}
			return ""
		}},
		{title: "P50", width: 6, right: true, drop: 5, cell: func(ep engine.EndpointSnapshot) string {
			if batchesOnly(ep) {
				return pad(batchMark+strings.TrimSpace(fmtMS(ep.BatchPace)), 6)
			}
			return m.latencyCell(ep, boundMS(ep.Latency.P50, ep.Latency.LowerBound(engine.PctP50)))
		}},
		{title: "P95", width: 6, right: true, cell: func(ep engine.EndpointSnapshot) string {
			if batchesOnly(ep) {
				return pad("batch", 6)
			}
			return m.latencyCell(ep, boundMS(ep.Latency.P95, ep.Latency.LowerBound(engine.PctP95)))
		}},
		{title: "HEAD", width: headW, right: true, drop: 2, cell: func(ep engine.EndpointSnapshot) string {
			if ep.Head <= 0 {
				return dash
			}
			if ep.LagUnknown(m.snap) {
				// Its last head, not one it has now: faint, as the latency
				// figures of an endpoint that answers nothing are, beside
				// the LAG it no longer has ("—").
				return st.faint.Render(fmt.Sprint(ep.Head))
			}
			return fmt.Sprint(ep.Head)
		}},
		{title: "LAG", width: lagW, right: true, cell: func(ep engine.EndpointSnapshot) string {
			if ep.LagExcluded {
				return st.warn.Render(lagText(m.snap, ep))
			}
			return lagText(m.snap, ep)
		}},
		{title: "ERR%", width: 5, right: true, drop: 6, cell: func(ep engine.EndpointSnapshot) string {
			return m.share(ep.Rates.ErrorRate, ep.Rates.Verdicts() > 0)
		}},
		{title: "429%", width: 5, right: true, drop: 4, cell: func(ep engine.EndpointSnapshot) string {
			return m.share(ep.Rates.RateLimitedShare(), ep.Rates.Verdicts() > 0)
		}},
		{title: "WINS", width: 5, right: true, drop: 3, cell: func(ep engine.EndpointSnapshot) string { return fmtCount(ep.Accounting.HedgesWon) }},
		{title: "INDEP", width: indepW, cell: func(ep engine.EndpointSnapshot) string { return m.indepCell(ep, shared, l.fullIndep) }},
	}
	if !l.fullIndep {
		cols[len(cols)-1].title = "IND"
	}
	return cols
}

// endpointsTitle says how far back the endpoint table's figures reach:
// its latencies and error shares are the stats window's (5 minutes by
// default), so a fault's ERR% stays for minutes after it ended, while the
// methods below are the last minute and WINS counts since start.
func (m Model) endpointsTitle(inner int) string {
	w := m.snap.Settings.StatsWindow
	if !m.haveSnap || w <= 0 {
		return "Endpoints" // an older serve that does not say
	}
	span := fmtSpan(w)
	return firstFitting([]string{
		"Endpoints · P50 P95 ERR% 429% over the last " + span + ", WINS since start",
		"Endpoints · figures over the last " + span,
	}, inner, "Endpoints")
}

// lagText is the endpoint's lag in blocks or slots, "!" after it when it
// is excluded for it; "—" before a head is seen (the engine's lag is 0
// then: an endpoint refusing connections since start read in sync), and
// once none has been seen for three probe intervals (LagUnknown).
func lagText(s engine.Snapshot, ep engine.EndpointSnapshot) string {
	if (ep.Head <= 0 || ep.LagUnknown(s)) && !ep.LagExcluded {
		return dash
	}
	if ep.LagExcluded {
		return fmt.Sprintf("%d!", ep.Lag)
	}
	return fmt.Sprint(ep.Lag)
}

// batchesOnly: the endpoint answered upstream batches and no single call
// or probe in the stats window (a client sending only batches, the probes
// off). Its latency columns would be "—", no data, while it answers:
// P50 shows its batch pace marked b (b42ms: the median round trip of its
// batches, what orders a batch's endpoints; the detail says it whole),
// and P95, which batches do not give, says "batch".
func batchesOnly(ep engine.EndpointSnapshot) bool {
	return ep.Latency.Count == 0 && ep.BatchPace > 0
}

// batchMark marks a batch pace in the latency columns.
const batchMark = "b"

func (m Model) share(v float64, have bool) string {
	s := fmtPct(v, have)
	if have && v >= 0.05 {
		return m.styles.err.Render(s)
	}
	return s
}

// stateCell is the breaker state as glyph, word and colour; an open one
// with the time left to its next trial (the detail says it whole), which
// only the detail gave: steady was out 4 minutes after a fault, its probes
// answering, with no word on the table of when it would be tried again
// (console audit, stop 56).
func (m Model) stateCell(ep engine.EndpointSnapshot) string {
	switch ep.Breaker.State {
	case engine.BreakerOpen:
		return m.styles.open.Render("✖ OPEN" + trialIn(ep.Breaker.NextTrialAt.Sub(m.snap.Time)))
	case engine.BreakerHalfOpen:
		return m.styles.half.Render("◐ half-open")
	default:
		return m.styles.closed.Render("● closed")
	}
}

// trialIn is the time left to an open breaker's next trial in at most
// four cells, rounded up (" 45s", " 5m", " 2h"); none once it is due.
func trialIn(left time.Duration) string {
	switch secs := int(math.Ceil(left.Seconds())); {
	case left <= 0:
		return ""
	case secs < 60:
		return fmt.Sprintf(" %ds", secs)
	case secs < 100*60:
		return fmt.Sprintf(" %dm", (secs+59)/60)
	default:
		return fmt.Sprintf(" %dh", (secs+3599)/3600)
	}
}

// measuredAnswers is the engine's minRouteSamples: the fewest answers an
// endpoint's latency figure is routed by.
const measuredAnswers = 5

// latencyCell draws a latency figure of ep faint while its window holds
// fewer answers than the router measures by: after a pool slowdown's
// answers were forgotten, P50 and P95 rested on one or two ("118ms
// 118ms") under a title saying "over the last 5m". Faint too while the
// endpoint answers nothing (silentMinute): a hung endpoint, open for two
// minutes, read P50 59ms P95 97ms, its answers from before it hung.
func (m Model) latencyCell(ep engine.EndpointSnapshot, cell string) string {
	if n := ep.Latency.Count; n > 0 {
		if _, silent := silentMinute(ep); n < measuredAnswers || silent {
			return m.styles.faint.Render(cell)
		}
	}
	return cell
}

// silentMinute says whether ep answered nothing over its series (the last
// minute: client attempts and probes) while attempts to it failed, and
// how many failed.
func silentMinute(ep engine.EndpointSnapshot) (failed int64, silent bool) {
	for _, p := range ep.Series {
		if p.Answers > 0 {
			return 0, false
		}
		failed += p.Failures
	}
	return failed, failed > 0
}

// badges are the endpoint's explicit states, in words (their narrow forms,
// the README's, when short: the narrow layout), most urgent first;
// fitBadges narrows the fewest of them to fit, and counts those that still
// do not. An abbr of "" is a badge with no narrow form: it is shown whole
// or counted.
func (m Model) badges(ep engine.EndpointSnapshot, width int, short bool) string {
	var bs []badge
	add := func(long, abbr string, st lipgloss.Style) {
		if abbr == "" {
			abbr = long
		}
		if short {
			long = abbr
		}
		bs = append(bs, badge{long, abbr, st})
	}
	now := m.engineNow()
	if f := ep.Fault; f != nil {
		left, short := "∞", "∞"
		if !f.Expires.IsZero() {
			left, short = fmtLeft(f.Expires.Sub(now)), fmtLeftCoarse(f.Expires.Sub(now))
		}
		add("FAULT "+shortMode(f.Mode)+" "+left, "FLT "+short, m.styles.fault)
	}
	if ep.Drained {
		// DRN only in the narrow layout, where "FLT 57s DRN" fits and
		// "FLT 57s DRAINED" does not; wider, the fault narrows before it
		// ("FLT 45s DRAINED").
		if short {
			add("DRN", "", m.styles.drained)
		} else {
			add("DRAINED", "", m.styles.drained)
		}
	}
	if ep.Breaker.HeldClosed {
		// It failed enough to open; the cap keeps it in the pool, last.
		add("HELD CLOSED", "HELD", m.styles.warn)
	}
	switch ep.Role {
	case engine.RoleStandby:
		// Idle, a standby takes no client traffic; active, it does because
		// the primaries cannot (the banner says why).
		if m.snap.StandbyActive {
			add("STANDBY ACTIVE", "SBY!", m.styles.warn)
		} else {
			add("STANDBY", "SBY", m.styles.faint)
		}
	case engine.RoleCanary:
		add(strings.ToUpper(engine.RoleLabel(ep.Role, ep.Share)), "CAN "+engine.ShareLabel(ep.Share), m.styles.accent)
	case engine.RoleShadow:
		// A shadow answers no client: its share is of reads mirrored.
		add(strings.ToUpper(engine.RoleLabel(ep.Role, ep.Share)), "SHD", m.styles.accent)
	}
	if !ep.BackoffUntil.IsZero() {
		add("BACKOFF", "BOFF", m.styles.warn) // not "429": one letter from 429m, one method's
	} else if ms := backedOffMethods(ep); len(ms) > 0 {
		// One method's limit: the endpoint still serves the others.
		add(methodsBadge("429", ms), "429m", m.styles.warn)
	}
	if ms := cannotServeMethods(ep); len(ms) > 0 {
		// It answered it cannot serve these: they go first to the others.
		add(methodsBadge("no", ms), "no-m", m.styles.warn)
	}
	if ms := hungMethods(ep); len(ms) > 0 && ep.Breaker.State == engine.BreakerClosed && !ep.Breaker.HeldClosed {
		// An attempt of these hung on it lately, whatever else it answers:
		// they go first to the others. An endpoint open or held closed is
		// out, or last, for every method: its detail lists them, and the
		// badge took the room of HELD at 80 columns (FLT 15s +2).
		add(methodsBadge("hung", ms), "hng", m.styles.warn)
	}
	if m.snap.CatchingUp(ep) {
		// Within the bound again, out until probes.recover probes agree.
		add(fmt.Sprintf("REJOIN %d/%d", ep.LagInSync, m.snap.RejoinNeed(ep)), "RJN", m.styles.warn)
	} else if ep.LagExcluded {
		add("LAGGING", "LAG", m.styles.warn)
	}
	ahead, other := false, false
	for _, x := range ep.Exclusions {
		if strings.HasPrefix(x, engine.ExcludeAhead+":") {
			ahead = true
		} else {
			other = true
		}
	}
	if ahead {
		// Its head is beyond the pool's pace: the endpoint, not the pool, is suspect.
		add("AHEAD", "", m.styles.err)
	}
	if other {
		add("EXCLUDED", "", m.styles.err)
	}
	if a := m.snap.WriteAffinity; a != nil && a.Endpoint == ep.Name && ep.Role != engine.RoleShadow {
		// It took the latest write: writes and the reads that must see
		// them go to it first until then (router.write_affinity). Never
		// to a shadow: made one, it answers none of them.
		add("WRITES "+fmtLeft(a.Until.Sub(now)), "W", m.styles.faint)
	}
	words, more := fitBadges(bs, width)
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = bs[i].st.Render(w)
	}
	return fit(strings.Join(out, " ")+more, width)
}

// methodsBadge names the first method and counts the rest: "429
// eth_getLogs +2".
func methodsBadge(word string, methods []string) string {
	s := word + " " + methods[0]
	if len(methods) > 1 {
		s += fmt.Sprintf(" +%d", len(methods)-1)
	}
	return s
}

// backedOffMethods are the methods backing off on ep after a 429, by name.
func backedOffMethods(ep engine.EndpointSnapshot) []string {
	return methodsUntil(ep, func(ms engine.MethodSnapshot) time.Time { return ms.BackoffUntil })
}

// cannotServeMethods are the methods ep answered lately it cannot serve
// (ranked after the endpoints that can), by name.
func cannotServeMethods(ep engine.EndpointSnapshot) []string {
	return methodsUntil(ep, func(ms engine.MethodSnapshot) time.Time { return ms.CannotServeUntil })
}

// hungMethods are the methods an attempt of which hung on ep lately
// (ranked after the others for them), by name.
func hungMethods(ep engine.EndpointSnapshot) []string {
	return methodsUntil(ep, func(ms engine.MethodSnapshot) time.Time { return ms.HungUntil })
}

// methodsUntil are the methods of ep whose mark (until) runs, by name.
func methodsUntil(ep engine.EndpointSnapshot, until func(engine.MethodSnapshot) time.Time) []string {
	var out []string
	for name, ms := range ep.Methods {
		if !until(ms).IsZero() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func shortMode(mode engine.FaultMode) string {
	if mode == engine.FaultLatency {
		return "lat"
	}
	return string(mode)
}

// sharedFate maps each endpoint named by an independence warning (other
// than "unknown") to the others it shares fate with.
func (m Model) sharedFate() map[string][]string {
	out := map[string][]string{}
	for _, w := range m.snap.Warnings {
		if w.Reason == "pool" || w.Reason == "asn-unknown" || len(w.Endpoints) < 2 {
			continue
		}
		for _, a := range w.Endpoints {
			for _, b := range w.Endpoints {
				if a != b && !slices.Contains(out[a], b) {
					out[a] = append(out[a], b)
				}
			}
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// indepCell says whether the endpoint is its own failure domain: shares
// fate (a warning names it with another endpoint), unknown (no check yet,
// or its AS is unknown), or its own.
func (m Model) indepCell(ep engine.EndpointSnapshot, shared map[string][]string, full bool) string {
	unknown := ep.Independence == nil
	for _, w := range m.snap.Warnings {
		if w.Reason == "asn-unknown" && slices.Contains(w.Endpoints, ep.Name) {
			unknown = true
		}
	}
	switch {
	case len(shared[ep.Name]) > 0:
		if full {
			return m.styles.warn.Render(fit("shared "+ep.Domain, 10))
		}
		return m.styles.warn.Render("!")
	case unknown:
		if full {
			return m.styles.faint.Render("unknown")
		}
		return m.styles.faint.Render("?")
	}
	if full {
		return m.styles.ok.Render(fit("own "+ep.Domain, 10))
	}
	return m.styles.ok.Render("✓")
}

// viewEndpoints renders the endpoint table in at most rows lines.
func (m Model) viewEndpoints(l layout, rows int) string {
	cols := m.endpointColumns(l)
	lines := []string{tableHead(cols, m.styles, m.marksFocus(focusEndpoints))}
	eps := m.snap.Endpoints
	start, shown, cut := tableWindow(len(eps), m.epCursor, rows-1)
	for _, ep := range eps[start : start+shown] {
		lines = append(lines, renderRow(cols, ep))
	}
	if cut {
		out := 0
		for _, ep := range slices.Concat(eps[:start], eps[start+shown:]) {
			if !ep.Routable && ep.Role != engine.RoleShadow {
				out++
			}
		}
		note := ""
		if out > 0 {
			note = fmt.Sprintf(", %d of them not routable", out)
		}
		lines = append(lines, m.outOfSight(start, len(eps)-start-shown, note, l.content))
	}
	if !m.haveSnap {
		lines = append(lines, m.styles.faint.Render("waiting for the first snapshot…"))
	}
	return strings.Join(lines, "\n")
}
