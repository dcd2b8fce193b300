package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rpcdash/rpcdash/sim"
)

// cmdSim is `rpcdash sim`: simulated upstreams on loopback until ctx ends
// (SIGINT or SIGTERM). With scenario flags (the same as rpcdash bench's: --median, --sigma,
// --tail, --tail-min, --tail-max, --endpoints, --capacity, --correlated,
// --incident, --seed) and no presets it starts the scenario's endpoints;
// with presets or URLs, the flags given override each of them. Incident
// windows are on the wall clock (the Unix epoch), so separate runs with
// the same parameters are slow at the same moments.
func cmdSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", stderr)
	chain := fs.String("chain", "evm", "evm or solana")
	host := fs.String("listen", "127.0.0.1", "host to listen on (loopback)")
	scenario := sim.TailScenario()
	scenario.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	scenarioGiven := false
	for _, n := range sim.ScenarioFlags {
		scenarioGiven = scenarioGiven || given[n]
	}
	var cfgs []sim.Config
	switch names := fs.Args(); {
	case len(names) > 0 && given["endpoints"]:
		return fmt.Errorf("sim: give presets or --endpoints, not both")
	case len(names) > 0:
		for i, n := range names {
			spec := n
			if !strings.Contains(spec, "://") {
				spec = "sim://" + spec
			}
			c, err := sim.ParseURL(spec)
			if err != nil {
				return err
			}
			scenario.Apply(&c, i, given)
			if err := c.Validate(); err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
			cfgs = append(cfgs, c)
		}
	case scenarioGiven:
		if err := scenario.Validate(); err != nil {
			return err
		}
		cfgs = scenario.Configs(nil)
		fmt.Fprintf(stdout, "scenario: %s\n", scenario)
	default:
		for _, n := range []string{"steady", "heavy-tail", "flaky"} {
			c, _ := sim.Preset(n)
			cfgs = append(cfgs, c)
		}
	}
	for i := range cfgs {
		if cfgs[i].Chain == "" {
			cfgs[i].Chain = *chain
		}
	}
	ups, err := sim.StartSet(cfgs, *host)
	if err != nil {
		return err
	}
	defer sim.CloseAll(ups)
	for _, u := range ups {
		fmt.Fprintf(stdout, "%s\t%s\t(counters: %s/_sim/counters)\n", u.Name(), u.URL(), u.URL())
	}
	<-ctx.Done()
	return nil
}
