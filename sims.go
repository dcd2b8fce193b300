package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// simEndpoint is a sim:// endpoint of the config, parsed.
type simEndpoint struct {
	index int // in cfg.Endpoints
	cfg   sim.Config
}

// parseSims parses the config's sim:// endpoint URLs, the one place they
// are read: a sim takes its endpoint's name unless the URL names it, and
// the config's chain unless the URL sets one.
func parseSims(cfg engine.Config) ([]simEndpoint, error) {
	var out []simEndpoint
	for i, ep := range cfg.Endpoints {
		if !strings.HasPrefix(ep.URL, "sim://") {
			continue
		}
		sc, err := sim.ParseURL(ep.URL)
		if err != nil {
			return nil, fmt.Errorf("endpoints[%d].url: %v", i, err)
		}
		if u, _ := url.Parse(ep.URL); u.Query().Get("name") == "" { // a preset names itself
			sc.Name = ep.Name
		}
		if sc.Chain == "" { // only the query sets it
			sc.Chain = cfg.Chain.Kind
		}
		out = append(out, simEndpoint{index: i, cfg: sc})
	}
	return out, nil
}

// startSims starts every sim:// endpoint on loopback and rewrites its URL
// to the real address, so the shipped config works with no provider at all.
func startSims(cfg *engine.Config) ([]*sim.Upstream, error) {
	sims, err := parseSims(*cfg)
	if err != nil || len(sims) == 0 {
		return nil, err
	}
	cfgs := make([]sim.Config, len(sims))
	for i, s := range sims {
		cfgs[i] = s.cfg
	}
	ups, err := sim.StartSet(cfgs, "127.0.0.1")
	if err != nil {
		return nil, err
	}
	for i, s := range sims {
		cfg.Endpoints[s.index].URL = ups[i].URL()
	}
	return ups, nil
}
