package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/rpcdash/rpcdash/internal/cli"
	"github.com/rpcdash/rpcdash/sim"
)

// cmdSim is `rpcdash sim`: simulated upstreams on loopback until ctx ends
// (SIGINT or SIGTERM), on ports the system picks or from --port up. With scenario flags (the same as rpcdash bench's: --median, --sigma,
// --tail, --tail-min, --tail-max, --endpoints, --capacity, --correlated,
// --incident, --seed) and no presets it starts the scenario's endpoints;
// with presets or URLs, the flags given (--chain too) override each of
// them, a URL's own parameters included. Incident
// windows are on the wall clock (the Unix epoch), so separate runs with
// the same parameters are slow at the same moments.
func cmdSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", stderr)
	chain := fs.String("chain", "evm", "evm or solana")
	host := fs.String("listen", "127.0.0.1", "host to listen on: a loopback one (127.0.0.1, ::1, localhost)")
	port := fs.Int("port", 0, "port of the first endpoint, the next ones on the ports after it, so that a config can name them (0: ports the system picks)")
	scenario := sim.TailScenario()
	scenario.RegisterFlags(fs)
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	given := cli.Given(fs)
	scenarioGiven := false
	for _, n := range sim.ScenarioFlags {
		scenarioGiven = scenarioGiven || given[n]
	}
	// Everything up to starting the sims is the command line's: a bad value
	// is a usage error (exit 2) naming its flag or preset.
	if *chain != sim.ChainEVM && *chain != sim.ChainSolana {
		return cli.Usagef("sim: --chain: %q is not evm or solana", *chain)
	}
	if !isLoopbackHost(*host) {
		return cli.Usagef("sim: --listen: %q is not a loopback host (127.0.0.1, ::1, localhost): simulated upstreams stay on this machine", *host)
	}
	if err := scenario.ValidateFlags(given); err != nil {
		return cli.Usage(fmt.Errorf("sim: %w", err))
	}
	var cfgs []sim.Config
	switch {
	case len(names) > 0 && given["endpoints"]:
		return cli.Usagef("sim: give presets or --endpoints, not both")
	case len(names) > 0:
		for i, n := range names {
			spec := n
			if !strings.Contains(spec, "://") {
				spec = "sim://" + spec
			}
			c, err := sim.ParseURL(spec)
			if err != nil {
				return cli.Usage(err)
			}
			scenario.Apply(&c, i, given)
			if err := c.Validate(); err != nil {
				return cli.Usage(fmt.Errorf("%s: %w", n, err))
			}
			cfgs = append(cfgs, c)
		}
	case scenarioGiven:
		if err := scenario.Validate(); err != nil {
			return cli.Usage(fmt.Errorf("sim: %w", err))
		}
		cfgs = scenario.Configs(nil)
	default:
		for _, n := range []string{"steady", "heavy-tail", "flaky"} {
			c, _ := sim.Preset(n)
			cfgs = append(cfgs, c)
		}
	}
	if *port < 0 || *port+len(cfgs)-1 > 65535 {
		return cli.Usagef("sim: --port: %d is not a port from which %d endpoints fit below 65536 (0: ports the system picks)", *port, len(cfgs))
	}
	ls := make([]sim.Latency, len(cfgs))
	for i, c := range cfgs {
		ls[i] = c.Latency
	}
	if err := sim.InertFlag(given, ls...); err != nil {
		return cli.Usage(fmt.Errorf("sim: %w", err))
	}
	if len(names) == 0 && scenarioGiven {
		fmt.Fprintf(stdout, "scenario: %s\n", scenario)
	}
	for i := range cfgs {
		// A --chain given overrides a URL's chain=, as the scenario flags
		// override its other values; not given, it is only the default.
		if given["chain"] || cfgs[i].Chain == "" {
			cfgs[i].Chain = *chain
		}
	}
	ups, err := sim.StartSetAt(cfgs, *host, *port)
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

// parseInterspersed parses args with fs, flags before, between and after
// the other arguments (`rpcdash sim steady --median 5ms`), which it
// returns in order; after "--" every argument is one of those.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return append(rest, left...), nil
		}
		rest, args = append(rest, left[0]), left[1:]
	}
}

// isLoopbackHost says whether host is localhost or a loopback address ("",
// all interfaces, is not).
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
