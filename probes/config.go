package probes

import "github.com/rpcdash/rpcdash/engine"

// ConfigProblems are the [probes] settings the engine's validation cannot
// judge, as start-up errors of their keys, so that they are reported with
// every other config error before anything listens (NewRunner would find
// them only once the engine serves). probes.asn_db is read only when the
// probes run with asn mode db, as NewRunner reads it.
func ConfigProblems(c engine.ProbesConfig) []engine.ConfigProblem {
	var out []engine.ConfigProblem
	if c.Resolver != "" {
		if _, err := resolverAddr(c.Resolver); err != nil {
			out = append(out, engine.ConfigProblem{Key: "probes.resolver", Why: err.Error()})
		}
	}
	if c.Enabled && c.ASNMode() == ASNDB && c.ASNDB != "" {
		if _, err := readASNDB(c.ASNDB); err != nil {
			out = append(out, engine.ConfigProblem{Key: "probes.asn_db", Why: err.Error()})
		}
	}
	return out
}
