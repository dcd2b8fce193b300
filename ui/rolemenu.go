package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/engine"
)

// roleMenu changes an endpoint's role, the seed's cutover done live: a new
// endpoint as a shadow (mirrored reads, compared), then a canary taking a
// small share of reads, then a primary; the old one to standby.
type roleMenu struct {
	endpoint    string
	field       int // roleField*
	role, share int // indexes into engine.Roles, roleShares
	// own and ownShare are the endpoint's role and share (0 when it takes
	// none) when the menu opened; moved, that the share field was moved
	// since.
	own      int
	ownShare float64
	moved    bool
	drained  bool
}

const (
	roleFieldRole = iota
	roleFieldShare
	numRoleFields
)

// roleShares are the shares the menu offers (a canary's of first attempts,
// a shadow's of reads mirrored).
var roleShares = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1}

// newRoleMenu starts at the endpoint's role and exact share. An endpoint
// that takes none starts at 5% whatever role is picked: a shadow too, not
// the API's default of every read, so that no keystroke mirrors them all.
func newRoleMenu(ep engine.EndpointSnapshot) roleMenu {
	r := roleMenu{endpoint: ep.Name, drained: ep.Drained}
	for i, name := range engine.Roles {
		if name == ep.Role {
			r.role = i
		}
	}
	r.own = r.role
	if engine.TakesShare(ep.Role) && ep.Share > 0 {
		r.ownShare = ep.Share
	}
	r.startShare()
	return r
}

// exact is the endpoint's own share, kept as it is (0.03 is not rounded
// to a preset) while its own role is picked and the share field is
// unmoved; 0 otherwise. A share means another thing in each role (a
// shadow's of reads mirrored, a canary's of first attempts): a shadow at
// 100% made a canary must not take every read's first attempt unasked.
func (r roleMenu) exact() float64 {
	if r.moved || r.role != r.own {
		return 0
	}
	return r.ownShare
}

// startShare is the preset offered for the role picked while the share
// field is unmoved: the one nearest the endpoint's own share for its own
// role, menuStartShare for another, as for an endpoint that takes none.
func (r *roleMenu) startShare() {
	r.share = closestShare(menuStartShare)
	if e := r.exact(); e > 0 {
		r.share = closestShare(e)
	}
}

// menuStartShare is the share the menu offers first for an endpoint that
// takes none yet (canary or shadow).
const menuStartShare = 0.05

// presetBeside is the preset just above v (d > 0) or just below it; -1
// when there is none on that side.
func presetBeside(v float64, d int) int {
	if d > 0 {
		for i, s := range roleShares {
			if s > v {
				return i
			}
		}
		return -1
	}
	for i := len(roleShares) - 1; i >= 0; i-- {
		if roleShares[i] < v {
			return i
		}
	}
	return -1
}

func closestShare(v float64) int {
	best := 0
	for i, s := range roleShares {
		if math.Abs(s-v) < math.Abs(roleShares[best]-v) {
			best = i
		}
	}
	return best
}

func (r roleMenu) roleName() string { return engine.Roles[r.role] }

// shareValue is the share shown and sent: the endpoint's own until the
// share field is moved, then the preset picked.
func (r roleMenu) shareValue() float64 {
	if e := r.exact(); e > 0 {
		return e
	}
	return roleShares[r.share]
}

// shareOf is the share sent: nil for a role that takes none.
func (r roleMenu) shareOf() *float64 {
	if !engine.TakesShare(r.roleName()) {
		return nil
	}
	v := r.shareValue()
	return &v
}

// describe says in words what the change does.
func (r roleMenu) describe() string {
	n := r.endpoint
	var s string
	switch r.roleName() {
	case engine.RolePrimary:
		s = n + " becomes a primary: routed by score with the other primaries, from the next request."
	case engine.RoleStandby:
		s = n + " becomes a standby: no client traffic while the primaries can take it, kept as a failover target."
	case engine.RoleCanary:
		s = fmt.Sprintf("%s becomes a canary: it takes %s of reads' first attempts (its failures fail over), and is otherwise a standby.",
			n, engine.ShareLabel(r.shareValue()))
	case engine.RoleShadow:
		s = fmt.Sprintf("%s becomes a shadow: it answers no client; %s of reads are mirrored to it and compared with the answers clients get.",
			n, engine.ShareLabel(r.shareValue()))
		// Whether another endpoint could still answer is the engine's
		// call: it refuses (409) a change that would leave none.
	}
	if r.drained && r.roleName() != engine.RoleShadow {
		s += " It is drained: it takes no request until undrained (d)."
	}
	return s + " In-flight requests finish where they are."
}

func (m Model) onRoleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k, r := m.keys, &m.role
	switch d := m.menuNav(msg, &r.field, numRoleFields); {
	case d != 0:
		if r.field == roleFieldRole {
			step(&r.role, len(engine.Roles), d)
			if !r.moved {
				r.startShare()
			}
		} else {
			label := func(i int) string { return engine.ShareLabel(roleShares[i]) }
			switch e, i := r.exact(), presetBeside(r.exact(), d); {
			case e > 0 && roleShares[r.share] != e && i >= 0:
				// The first move leaves the exact share for the preset
				// on that side of it.
				r.share, r.moved = i, true
			case e > 0 && roleShares[r.share] != e:
				m.status = statusLine{text: fmt.Sprintf("share stops at %s, no preset beyond it (%s–%s)", engine.ShareLabel(e), label(0), label(len(roleShares)-1))}
			default:
				m.stepOrSay(&r.share, len(roleShares), d, "share", label)
				r.moved = true
			}
		}
	case key.Matches(msg, k.Enter):
		a := action{kind: actRole, endpoint: r.endpoint, role: r.roleName(), share: r.shareOf(),
			desc: "role of " + r.endpoint + " → " + engine.RoleLabel(r.roleName(), r.shareValue())}
		q := "Change the role? " + r.describe()
		// A promotion is judged as the engine judges it, on the pool as it
		// is now (the newest Snapshot, behind a frozen screen too).
		now := m.snap
		if m.frozen && m.haveLive {
			now = m.live
		}
		p, promoting := now.PromotionOf(r.endpoint, r.roleName())
		switch {
		case !promoting:
		case !p.Refused:
			q += " The promotion rests on: " + p.Evidence + "."
		default:
			// Never sent as it is (it would be refused), never forced
			// silently: y leads to a second question that forces it.
			q += " The engine would refuse it: " + p.Failed() + ". y asks once more, to force it; any other key cancels."
			force := forceQuestion(p, a)
			m.confirm, m.overlay = confirmDialog{question: q, act: a, then: &force}, overlayConfirm
			return m, nil
		}
		return m.ask(q, a)
	}
	return m, nil
}

// forceQuestion is the deliberate second confirmation of a promotion the
// engine refuses on the endpoint's own evidence: y sends it with force.
func forceQuestion(p engine.Promotion, a action) confirmDialog {
	a.force = true
	a.desc += " (forced)"
	return confirmDialog{act: a, question: fmt.Sprintf(
		"Force %s from %s to %s? The engine refuses it on %s's own evidence: %s. Forced, it takes clients' requests anyway, and its role event says it was forced over these figures. y forces it; any other key cancels.",
		p.Endpoint, p.From, p.To, p.Endpoint, p.Failed())}
}

func (m Model) roleMenuView(width int) string {
	r := m.role
	field := func(i int, name, value string) string { return m.menuField(r.field == i, name, 8, value) }
	share := engine.ShareLabel(r.shareValue())
	switch r.roleName() {
	case engine.RoleCanary:
		share += " of reads' first attempts"
	case engine.RoleShadow:
		share += " of reads mirrored"
		if r.exact() == 0 && roleShares[r.share] == menuStartShare {
			share += " (the menu starts here, not at every read)"
		}
	default:
		share = m.styles.faint.Render("(canary and shadow only)")
	}
	lines := []string{
		m.styles.title.Render("Role of " + r.endpoint),
		"",
		field(roleFieldRole, "role", r.roleName()),
		field(roleFieldShare, "share", share),
		"",
		wrap(r.describe(), width),
		"",
		m.styles.faint.Render("cutover: shadow → compare → canary → primary; the old one → standby"),
		m.styles.faint.Render("↑/↓ field · ←/→ value, → up · enter: review and confirm · esc: cancel"),
	}
	return strings.Join(lines, "\n")
}
