package engine

import (
	"slices"
	"time"
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

// SetIndependence replaces the failure domains (endpoint name → domain id),
// per-endpoint findings and the pool's warnings. New warnings are events.
func (e *Engine) SetIndependence(info map[string]IndependenceInfo, domains map[string]string, warnings []string) {
	for _, ep := range e.endpoints {
		if in, ok := info[ep.Name]; ok {
			// The TLS issuer comes from the endpoint's certificate, AS
			// names from DNS: upstream text, cut and sanitised.
			c := in
			c.IPs = slices.Clone(in.IPs)
			c.ASNs = slices.Clone(in.ASNs)
			for i, a := range c.ASNs {
				c.ASNs[i] = sanitizeText(a, maxUpstreamText)
			}
			c.TLSIssuer = sanitizeText(in.TLSIssuer, maxUpstreamText)
			c.Error = sanitizeText(in.Error, maxShownText)
			ep.independence.Store(&c)
		}
		if d, ok := domains[ep.Name]; ok {
			ep.domain.Store(&d)
		}
	}
	warnings = slices.Clone(warnings)
	for i, w := range warnings {
		warnings[i] = sanitizeText(w, maxShownText)
	}
	e.mu.Lock()
	old := e.warnings
	e.warnings = warnings
	e.mu.Unlock()
	for _, w := range warnings {
		if !slices.Contains(old, w) {
			e.events.add(Event{Type: EventPool, Message: w})
		}
	}
}

func (e *Engine) poolWarnings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.warnings)
}
