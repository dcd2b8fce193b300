package engine

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// IndependenceInfo is what the independence checks found for an endpoint.
type IndependenceInfo struct {
	IPs            []string  `json:"ips,omitempty"`
	ASNs           []string  `json:"asns,omitempty"` // "AS13335 CLOUDFLARENET" or "unknown"
	TLSIssuer      string    `json:"tls_issuer,omitempty"`
	TLSFingerprint string    `json:"tls_fingerprint,omitempty"`
	Error          string    `json:"error,omitempty"`
	CheckedAt      time.Time `json:"checked_at"`
}

// Warning is one finding about the pool that an operator should read: which
// endpoints it concerns (none for the whole pool), why, in a word the
// console can key on, and in words.
type Warning struct {
	Endpoints []string
	Reason    string // e.g. "ip", "asn", "provider-region", "asn-unknown", "pool" (see probes)
	Text      string
}

// configuredDomains is each endpoint's failure domain until independence
// checks say otherwise (and for good, with probes off): endpoints that
// share a provider, or a region, are one domain ("d1", "d2", … in the
// order of each domain's first endpoint by name, as the checks number
// them), transitively; one with neither configured is "" (unknown, shares
// with none). Names are compared trimmed and case-folded.
func configuredDomains(eps []EndpointConfig) []string {
	order := make([]int, len(eps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(eps[a].Name, eps[b].Name) })
	parent := make([]int, len(eps))
	for i := range parent {
		parent[i] = i
	}
	root := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	type key struct{ kind, value string }
	first := map[key]int{} // {"provider", "infura"} → its first endpoint
	for _, i := range order {
		for _, k := range []key{{"provider", eps[i].Provider}, {"region", eps[i].Region}} {
			if k.value = strings.ToLower(strings.TrimSpace(k.value)); k.value == "" {
				continue
			}
			if j, ok := first[k]; ok {
				parent[root(i)] = root(j)
			} else {
				first[k] = i
			}
		}
	}
	out := make([]string, len(eps))
	ids := map[int]string{}
	for _, i := range order {
		if strings.TrimSpace(eps[i].Provider) == "" && strings.TrimSpace(eps[i].Region) == "" {
			continue
		}
		r := root(i)
		if _, ok := ids[r]; !ok {
			ids[r] = "d" + strconv.Itoa(len(ids)+1)
		}
		out[i] = ids[r]
	}
	return out
}

func cloneWarnings(ws []Warning) []Warning {
	out := make([]Warning, len(ws))
	for i, w := range ws {
		out[i] = Warning{Endpoints: slices.Clone(w.Endpoints), Reason: w.Reason, Text: w.Text}
	}
	return out
}

// SetIndependence replaces the failure domains (endpoint name → domain id),
// per-endpoint findings and the pool's warnings. New warnings are events.
func (e *Engine) SetIndependence(info map[string]IndependenceInfo, domains map[string]string, warnings []Warning) {
	for _, ep := range e.endpoints {
		if in, ok := info[ep.Name]; ok {
			// The TLS issuer comes from the endpoint's certificate, AS
			// names from DNS: upstream text, cut and sanitised.
			c := in
			c.IPs = slices.Clone(in.IPs)
			c.ASNs = slices.Clone(in.ASNs)
			for i, a := range c.ASNs {
				c.ASNs[i] = redact.Sanitize(a, redact.MaxUpstream)
			}
			c.TLSIssuer = redact.Sanitize(in.TLSIssuer, redact.MaxUpstream)
			// A lookup's error names the host, whose labels below its
			// domain are hidden as the URL's are.
			c.Error = redact.Sanitize(e.scrub.Scrub(in.Error), redact.MaxShown)
			ep.independence.Store(&c)
		}
		if d, ok := domains[ep.Name]; ok {
			ep.domain.Store(&d)
		}
	}
	warnings = cloneWarnings(warnings)
	for i := range warnings {
		warnings[i].Text = redact.Sanitize(e.scrub.Scrub(warnings[i].Text), redact.MaxShown)
	}
	e.mu.Lock()
	old := e.warnings
	e.warnings = warnings
	e.mu.Unlock()
	for _, w := range warnings {
		if !slices.ContainsFunc(old, func(o Warning) bool { return o.Text == w.Text }) {
			ev := Event{Type: EventPool, Message: w.Text}
			if len(w.Endpoints) > 0 && w.Reason != "pool" {
				ev.Endpoint = w.Endpoints[0]
			}
			e.events.add(ev)
		}
	}
}

func (e *Engine) poolWarnings() []Warning {
	e.mu.Lock()
	defer e.mu.Unlock()
	return cloneWarnings(e.warnings)
}
