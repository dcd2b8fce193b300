package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Roles at runtime. An endpoint's role and share are one immutable value
// swapped whole, so that a request reads a consistent pair; a change takes
// effect for the next request and in-flight attempts finish where they are.
//
//   - primary: routed by score;
//   - standby: only when the primaries cannot take the request (standby.go);
//   - canary: share of reads' first attempts, otherwise a standby (canary.go);
//   - shadow: never answers a client; share of reads mirrored to it and its
//     answers compared with the client's (shadow.go).

type roleState struct {
	role  string
	share float64
}

func (ep *endpoint) roleState() roleState { return *ep.roles.Load() }

func (ep *endpoint) role() string { return ep.roles.Load().role }

// keptAside says whether the router keeps ep aside from the primaries: a
// standby or a canary (rank).
func (ep *endpoint) keptAside() bool {
	r := ep.role()
	return r == RoleStandby || r == RoleCanary
}

// standbyLike: kept aside from the primaries until they call for it (a
// standby, or a canary outside the share of first attempts it takes).
func (ep *endpoint) standbyLike() bool {
	r := ep.roles.Load().role
	return r == RoleStandby || r == RoleCanary
}

// isShadow: mirrors only; out of routing and of every count of the pool.
func (ep *endpoint) isShadow() bool { return ep.roles.Load().role == RoleShadow }

// canAnswer is the one rule for "an endpoint able to answer clients": not
// a shadow, not drained, not found on another chain. Config validation
// knows roles only (nothing is drained or on the wrong chain before
// start); at runtime endpoint.answersClients reads it off the endpoint.
func canAnswer(role string, drained, wrongChain bool) bool {
	return role != RoleShadow && !drained && !wrongChain
}

// answerers counts the endpoints but except that could answer a client now.
func (e *Engine) answerers(except *endpoint) int {
	n := 0
	for _, o := range e.endpoints {
		if o != except && o.answersClients() {
			n++
		}
	}
	return n
}

// hasStandbys says whether some endpoint is a standby or a canary now.
func (e *Engine) hasStandbys() bool {
	for _, ep := range e.endpoints {
		if ep.standbyLike() {
			return true
		}
	}
	return false
}

// RoleInfo is an endpoint's role as PUT /v1/endpoints/{name}/role answers it.
type RoleInfo struct {
	Name  string  `json:"name"`
	Role  string  `json:"role"`
	Share float64 `json:"share"`
	// Promotion: the judgement a promotion rests on (promote.go); nil
	// for any other change.
	Promotion *Promotion `json:"promotion,omitempty"`
}

// errNoAnswerer: a role change would leave no endpoint able to answer.
var errNoAnswerer = errors.New("no endpoint left to answer")

// roleError is a role change refused for its value: Field names the field.
type roleError struct {
	Field, Why string
}

func (r *roleError) Error() string { return r.Field + ": " + r.Why }

// SetRole changes an endpoint's role (and share: nil is the role's
// default) for the next request. It refuses a change that would leave no
// endpoint able to answer now (answersClients; errNoAnswerer), and a
// promotion the endpoint's own evidence says fails (promote.go;
// IsPromotionRefused): ForceRole takes that one.
func (e *Engine) SetRole(by Actor, name, role string, share *float64) (RoleInfo, error) {
	return e.setRoleNamed(by, name, role, share, false)
}

// ForceRole is SetRole taking a promotion whose evidence says it fails
// (the admin API's "force": true); the event says it was forced, and why
// it would have been refused.
func (e *Engine) ForceRole(by Actor, name, role string, share *float64) (RoleInfo, error) {
	return e.setRoleNamed(by, name, role, share, true)
}

func (e *Engine) setRoleNamed(by Actor, name, role string, share *float64, force bool) (RoleInfo, error) {
	ep, err := e.endpoint(name)
	if err != nil {
		return RoleInfo{}, err
	}
	return e.setRole(by, ep, role, share, force)
}

// IsPromotionRefused says whether err is a promotion refused on the
// endpoint's evidence, and returns its judgement.
func IsPromotionRefused(err error) (Promotion, bool) {
	var r *promotionRefusedError
	if errors.As(err, &r) {
		return r.Promotion, true
	}
	return Promotion{}, false
}

func (e *Engine) setRole(by Actor, ep *endpoint, role string, share *float64, force bool) (RoleInfo, error) {
	name := ep.Name
	if err := checkRole(role); err != nil {
		return RoleInfo{}, &roleError{Field: "role", Why: err.Error()}
	}
	next := roleState{role: role, share: defaultShare(role)}
	if share != nil {
		if err := checkShare(role, *share); err != nil {
			return RoleInfo{}, &roleError{Field: "share", Why: err.Error()}
		}
		next.share = *share
	}
	e.roleMu.Lock()
	if role == RoleShadow && e.answerers(ep) == 0 {
		e.roleMu.Unlock()
		return RoleInfo{}, fmt.Errorf("%w: every other endpoint is a shadow, drained or on the wrong chain, so %s is the last that can answer clients (a primary, standby or canary must remain able to)", errNoAnswerer, name)
	}
	// Judged under roleMu against the role it has now: two changes cannot
	// both be judged as from shadow.
	promo, promoting := judgePromotion(name, ep.role(), role, e.figuresOf(ep))
	if promoting && promo.Refused {
		if !force {
			e.roleMu.Unlock()
			return RoleInfo{}, &promotionRefusedError{Promotion: promo}
		}
		promo.Forced = true
	}
	prev := *ep.roles.Swap(&next)
	switch {
	case prev.role != RoleShadow && next.role == RoleShadow:
		e.shadows.Add(1)
	case prev.role == RoleShadow && next.role != RoleShadow:
		e.shadows.Add(-1)
	}
	e.roleMu.Unlock()
	if prev != next {
		msg := "role changed for the next request; " + inFlightFinish(ep.inflight.Load())
		if n := e.filters.heldBy(ep); n > 0 && (next.role == RoleShadow || next.role == RoleStandby) {
			// A filter's state lives only where it was created (pinned,
			// not ranked): its polls keep going there.
			msg += fmt.Sprintf("; the %d %s it holds %s still polled on it", n, Plural(n, "filter", "filters"), Plural(n, "is", "are"))
		}
		if ep.drained.Load() && next.role != RoleShadow {
			msg += "; it is drained: it takes no request until undrained"
		}
		if promoting {
			msg += "; " + promo.eventText()
		}
		e.events.add(Event{Type: EventRole, Endpoint: name, From: prev.label(), To: next.label(), Actor: by, Message: msg})
		e.poolChanged()
	}
	info := RoleInfo{Name: name, Role: next.role, Share: next.share}
	if promoting {
		info.Promotion = &promo
	}
	return info, nil
}

// RoleLabel is a role as events, `rpcdash status`, the console's badges
// and its role menu show it: a canary's share always ("canary 5%"), a
// shadow's when it mirrors less than every read ("shadow 25%", "shadow").
func RoleLabel(role string, share float64) string {
	if role == RoleCanary || role == RoleShadow && share < 1 {
		return role + " " + ShareLabel(share)
	}
	return role
}

func (r roleState) label() string { return RoleLabel(r.role, r.share) }

// checkRole is the one check of a role's name (config, SetRole).
func checkRole(role string) error {
	if !slices.Contains(Roles, role) {
		return fmt.Errorf("must be %q, %q, %q or %q, got %s", RolePrimary, RoleStandby, RoleShadow, RoleCanary, ShowConfigValue(role))
	}
	return nil
}

// ShareLabel shows a share as a percentage ("5%", "0.5%").
func ShareLabel(share float64) string {
	return strconv.FormatFloat(math.Round(share*1e4)/1e2, 'f', -1, 64) + "%"
}

// LastResort says whether panic routing may still send ep a request,
// routable or not: the rule Snapshot.LastResort counts by (canAnswer, and
// not refusing connections), read off a Snapshot's fields for those that
// hold one and not the engine.
func (ep EndpointSnapshot) LastResort() bool {
	wrongChain := slices.ContainsFunc(ep.Exclusions, func(x string) bool { return strings.HasPrefix(x, ExcludeWrongChain+": ") })
	return canAnswer(ep.Role, ep.Drained, wrongChain) && !ep.Refusing
}
