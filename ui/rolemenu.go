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
}

const (
	roleFieldRole = iota
	roleFieldShare
	numRoleFields
)

// roleShares are the shares the menu offers (a canary's of first attempts,
// a shadow's of reads mirrored).
var roleShares = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1}

// newRoleMenu starts at the endpoint's role and share.
func newRoleMenu(ep engine.EndpointSnapshot) roleMenu {
	r := roleMenu{endpoint: ep.Name}
	for i, name := range engine.Roles {
		if name == ep.Role {
			r.role = i
		}
	}
	r.share = closestShare(ep.Share)
	if !engine.TakesShare(ep.Role) {
		r.share = closestShare(engine.DefaultShare(engine.RoleCanary))
	}
	return r
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

// shareOf is the share sent: nil for a role that takes none.
func (r roleMenu) shareOf() *float64 {
	if !engine.TakesShare(r.roleName()) {
		return nil
	}
	v := roleShares[r.share]
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
			n, engine.ShareLabel(roleShares[r.share]))
	case engine.RoleShadow:
		s = fmt.Sprintf("%s becomes a shadow: it answers no client; %s of reads are mirrored to it and compared with the answers clients get.",
			n, engine.ShareLabel(roleShares[r.share]))
		// Whether another endpoint could still answer is the engine's
		// call: it refuses (409) a change that would leave none.
	}
	return s + " In-flight requests finish where they are."
}

func (m Model) onRoleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k, r := m.keys, &m.role
	step := func(v *int, n, d int) { *v = (*v + d + n) % n }
	switch {
	case key.Matches(msg, k.Up):
		step(&r.field, numRoleFields, -1)
	case key.Matches(msg, k.Down), key.Matches(msg, k.Tab):
		step(&r.field, numRoleFields, 1)
	case key.Matches(msg, k.Left), key.Matches(msg, k.Right):
		d := 1
		if key.Matches(msg, k.Left) {
			d = -1
		}
		if r.field == roleFieldRole {
			step(&r.role, len(engine.Roles), d)
		} else {
			step(&r.share, len(roleShares), d)
		}
	case key.Matches(msg, k.Enter):
		var share float64
		if sh := r.shareOf(); sh != nil {
			share = *sh
		}
		label := engine.RoleLabel(r.roleName(), share)
		a := action{kind: actRole, endpoint: r.endpoint, role: r.roleName(), share: r.shareOf(),
			desc: "role of " + r.endpoint + " → " + label}
		return m.ask("Change the role? "+r.describe(), a)
	}
	return m, nil
}

func (m Model) roleMenuView(width int) string {
	r := m.role
	field := func(i int, name, value string) string {
		cur := "  "
		if r.field == i {
			cur = m.styles.accent.Render("▸ ")
			value = "‹ " + value + " ›"
		}
		return cur + fit(name, 8) + value
	}
	share := engine.ShareLabel(roleShares[r.share])
	switch r.roleName() {
	case engine.RoleCanary:
		share += " of reads' first attempts"
	case engine.RoleShadow:
		share += " of reads mirrored"
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
		m.styles.faint.Render("↑/↓ field · ←/→ value · enter: review and confirm · esc: cancel"),
	}
	return strings.Join(lines, "\n")
}
