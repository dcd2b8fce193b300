package engine

import (
	"slices"
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
			c.Error = redact.Sanitize(in.Error, redact.MaxShown)
			ep.independence.Store(&c)
		}
		if d, ok := domains[ep.Name]; ok {
			ep.domain.Store(&d)
		}
	}
	warnings = cloneWarnings(warnings)
	for i := range warnings {
		warnings[i].Text = redact.Sanitize(warnings[i].Text, redact.MaxShown)
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
