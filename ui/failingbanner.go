package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// failingHeld is the latest time every endpoint was seen failing (see
// failingPool), kept for slowdownHold after it ends as the slowdown's
// banner is: held-closed breakers come and go with each success.
type failingHeld struct {
	held, out, faults string
	end               time.Time
}

// failingPool says whether no endpoint that answers clients is well:
// each is out of routing or failing with its breaker held closed by
// breaker.max_open_share, and at least one is held (none routable has
// the NO ROUTABLE ENDPOINT banner). Breakers never empty the pool, so
// the header still counts the held ones routable ("2/3 routable") while
// every request may fail.
func (m Model) failingPool() (held, out, faults []string, ok bool) {
	for _, ep := range m.snap.Endpoints {
		if ep.Role == engine.RoleShadow {
			continue
		}
		switch {
		case ep.Breaker.HeldClosed:
			held = append(held, ep.Name)
		case !ep.Routable:
			reason := notRoutableReason(ep, m.snap)
			if ep.LastResort() {
				// Out of the ranking is not out of reach: a read fails
				// over to it once every routable endpoint has failed
				// (an open breaker, a lag, a back-off). Drained, on the
				// wrong chain or refusing connections, it is not asked.
				reason += ", reads still fail over to it last"
			}
			out = append(out, ep.Name+": "+reason)
		default:
			return nil, nil, nil, false
		}
		if ep.Fault != nil {
			faults = append(faults, ep.Name)
		}
	}
	if len(faults) > 1 && len(faults) == m.snap.Serving() {
		faults = []string{"every endpoint"}
	}
	return held, out, faults, len(held) > 0
}

// noteFailing follows failingPool from Snapshot to Snapshot.
func (m *Model) noteFailing() {
	held, out, faults, ok := m.failingPool()
	switch {
	case ok:
		m.failing = &failingHeld{held: strings.Join(held, ", "), out: strings.Join(out, "; "), faults: strings.Join(faults, ", ")}
	case m.failing == nil:
	case m.failing.end.IsZero():
		m.failing.end = m.snap.Time
	case m.snap.Time.Sub(m.failing.end) >= slowdownHold:
		m.failing = nil
	}
}

// failingBanner is what is failing and what the operator can do about it
// from here, wrapped whole within the width: cut to two lines it lost
// "… breaker.max_open_share keeps breakers…" at 120 columns. Held after
// its end, it says what was, on no more lines than it took live (so that
// its end does not push the screen down), and on no more than its words
// need: padded to the live count, it left a blank line under the header.
func (m Model) failingBanner() []string {
	f := m.failing
	if f == nil {
		return nil
	}
	live := m.failingLive(f)
	if f.end.IsZero() {
		return m.bannerIn(m.styles.banner, live, m.bannerLineCount(live))
	}
	msg := fmt.Sprintf("⚠ EVERY ENDPOINT FAILING over %s ago: %s were held closed by breaker.max_open_share, requests may have failed.",
		fmtAge(m.snap.Time.Sub(f.end)), f.held)
	if f.faults != "" {
		msg += " Faults were injected on " + f.faults + "."
	}
	if f.out != "" {
		msg += " Out: " + f.out + "."
	}
	return m.bannerIn(m.styles.warn, msg, m.bannerLineCount(live))
}

// failingLive is the live banner's text: what the operator can do comes
// before the endpoints out, and why the breakers are held closed only
// when it costs no line of its own.
func (m Model) failingLive(f *failingHeld) string {
	msg := "⚠ EVERY ENDPOINT FAILING: " + f.held + " held closed by breaker.max_open_share, requests may fail."
	if f.faults != "" && !m.opts.ReadOnly {
		msg += " Faults injected on " + f.faults + ": c clears the selected one's."
	}
	if f.out != "" {
		msg += " Out: " + f.out + "."
	}
	if why := msg + " The cap keeps breakers from emptying the pool."; m.bannerLineCount(why) == m.bannerLineCount(msg) {
		return why
	}
	return msg
}

// bannerLineCount is how many lines msg takes as a banner, whole.
func (m Model) bannerLineCount(msg string) int { return len(strings.Split(wrap(msg, m.width-2), "\n")) }
