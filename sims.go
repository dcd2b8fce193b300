package main

import (
	"errors"
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

// isSim says whether an endpoint URL is a sim:// one, which main starts
// and rewrites before the engine sees it.
func isSim(rawURL string) bool { return strings.HasPrefix(rawURL, "sim://") }

// parseSims parses the config's sim:// endpoint URLs, the one place they
// are read (the config's validation and startSims both come here): a sim
// takes its endpoint's name unless the URL names it, and the config's
// chain unless the URL sets one. Each URL that does not parse is a problem
// of its key, and is left out of sims.
func parseSims(cfg engine.Config) (sims []simEndpoint, problems []engine.ConfigProblem) {
	for i, ep := range cfg.Endpoints {
		if !isSim(ep.URL) {
			continue
		}
		sc, err := sim.ParseURL(ep.URL)
		if err != nil {
			problems = append(problems, engine.ConfigProblem{Key: fmt.Sprintf("endpoints[%d].url", i), Why: err.Error()})
			continue
		}
		if u, _ := url.Parse(ep.URL); u.Query().Get("name") == "" { // a preset names itself
			sc.Name = ep.Name
		}
		if sc.Chain == "" { // only the query sets it
			sc.Chain = cfg.Chain.Kind
		}
		sims = append(sims, simEndpoint{index: i, cfg: sc})
	}
	return sims, problems
}

// startSims starts every sim:// endpoint on loopback and rewrites its URL
// to the real address, so the shipped config works with no provider at all.
func startSims(cfg *engine.Config) ([]*sim.Upstream, error) {
	sims, problems := parseSims(*cfg)
	if len(problems) > 0 {
		return nil, errors.New(problems[0].String())
	}
	if len(sims) == 0 {
		return nil, nil
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
