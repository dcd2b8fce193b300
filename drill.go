package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/benchengine"
	"github.com/rpcdash/rpcdash/internal/cli"
)

// cmdDrill is `rpcdash drill`: the failover verification plan (bench.Drill)
// against a running rpcdash (--admin), or without it against an embedded
// engine over sims whose thresholds the --breaker-* and --probe-interval
// flags set. Each step is printed as it ends, with its timing and evidence;
// a failed step makes the exit code non-zero and the error names it.
func cmdDrill(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("drill", stderr)
	admin := fs.String("admin", "", "admin URL of a running rpcdash (default: an embedded engine over sims)")
	cli.TokenFlag(fs, "admin-token", "bearer token of --admin")
	target := fs.String("target", "", "the instance's JSON-RPC URL (server.listen), for the drill's own reads")
	allowRemote := fs.Bool("allow-remote", false, "allow an instance off this machine")
	mode := fs.String("mode", bench.DrillDefaultMode, "the fault: "+strings.Join(bench.DrillModes, ", "))
	latency := fs.Duration("latency", 2*time.Second, "the delay --mode latency adds")
	noLoad := fs.Bool("no-load", false, "send no reads of its own; judge by the instance's own traffic")
	rate := fs.Float64("rate", 20, "the drill's reads per second, one at a time")
	stepTimeout := fs.Duration("step-timeout", 30*time.Second, "bound on waiting for the cut-out, and for readmission once the breaker's cooldown (as the instance reports it) is over")
	format := fs.String("format", "text", "text or json")
	seed := fs.Int64("seed", 1, "seed of the reads' params")
	e := bench.DefaultEmbeddedDrill
	fs.IntVar(&e.BreakerFailures, "breaker-failures", e.BreakerFailures, "embedded engine: breaker.failures")
	fs.IntVar(&e.BreakerSuccesses, "breaker-successes", e.BreakerSuccesses, "embedded engine: breaker.successes")
	fs.DurationVar(&e.BreakerCooldown, "breaker-cooldown", e.BreakerCooldown, "embedded engine: breaker.cooldown")
	fs.DurationVar(&e.ProbeInterval, "probe-interval", e.ProbeInterval, "embedded engine: probes.interval")
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := cli.Given(fs)
	token := cli.TokenOf(fs, "admin-token")
	// A malformed URL and a flag missing beside it are both said (--admin
	// 127.0.0.1 alone said only that --target was missing).
	urlProblem := cli.BaseURLs("drill", cli.URLFlag{Name: "--admin", Value: admin}, cli.URLFlag{Name: "--target", Value: target, JSONRPC: true})
	flagProblem := func() error {
		switch {
		case fs.NArg() > 0:
			return cli.Usagef("drill: unexpected arguments %q", fs.Args())
		case !slices.Contains(bench.DrillModes, *mode):
			return cli.Usagef("drill: --mode %q is not one of %s", *mode, strings.Join(bench.DrillModes, ", "))
		case *format != "text" && *format != "json":
			return cli.Usagef("drill: --format %q is not text or json", *format)
		case *admin == "" && *target != "":
			return cli.Usagef("drill: --target names a running instance's JSON-RPC port; give its --admin too")
		case *admin != "" && *target == "" && !*noLoad:
			return cli.Usagef("drill: --admin needs --target, the instance's JSON-RPC URL, for the drill's own reads (or --no-load)")
		case *admin == "" && given["admin-token"]:
			return cli.Usagef("drill: --admin-token goes with --admin; the embedded engine has no token")
		case *admin == "" && given["allow-remote"]:
			return cli.Usagef("drill: --allow-remote goes with --admin; the embedded engine is on this machine")
		case *noLoad && given["target"]:
			return cli.Usagef("drill: --target is where the drill's own reads go, which --no-load turns off")
		case *noLoad && given["rate"]:
			return cli.Usagef("drill: --rate paces the drill's own reads, which --no-load turns off")
		case *noLoad && given["seed"]:
			return cli.Usagef("drill: --seed seeds the drill's own reads, which --no-load turns off")
		case !(*rate > 0 && *rate <= 200): // NaN included
			return cli.Usagef("drill: --rate %v: want (0, 200] reads per second", *rate)
		case given["latency"] && *mode != "latency":
			return cli.Usagef("drill: --latency is the delay --mode latency adds; --mode is %s", *mode)
		case *latency <= 0 || *latency > time.Hour:
			return cli.Usagef("drill: --latency %s: want (0s, 1h]", *latency)
		case *stepTimeout <= 0:
			return cli.Usagef("drill: --step-timeout %s: want a positive duration", *stepTimeout)
		case e.BreakerFailures < 1:
			return cli.Usagef("drill: --breaker-failures %d: want at least 1", e.BreakerFailures)
		case e.BreakerSuccesses < 1:
			return cli.Usagef("drill: --breaker-successes %d: want at least 1", e.BreakerSuccesses)
		case e.BreakerCooldown <= 0:
			return cli.Usagef("drill: --breaker-cooldown %s: want a positive duration", e.BreakerCooldown)
		case e.ProbeInterval <= 0:
			return cli.Usagef("drill: --probe-interval %s: want a positive duration", e.ProbeInterval)
		}
		return nil
	}()
	if err := errors.Join(urlProblem, flagProblem); err != nil {
		return cli.Usage(err)
	}
	if *admin != "" {
		for _, f := range []string{"breaker-failures", "breaker-successes", "breaker-cooldown", "probe-interval"} {
			if given[f] {
				return cli.Usagef("drill: --%s sets the embedded engine; a running instance has its own", f)
			}
		}
	}
	cfg := bench.DrillConfig{RPCURL: *target, Admin: bench.Admin{URL: *admin, Token: token, AllowRemote: *allowRemote},
		Mode: *mode, Latency: *latency, NoLoad: *noLoad, Rate: *rate, StepTimeout: *stepTimeout, Seed: *seed}
	if err := bench.CheckDrillTargets(cfg); *admin != "" && err != nil {
		return err // refused before the drill is announced
	}
	text := *format == "text"
	// Announced as the first step starts, once the drill holds the
	// instance's lease: a drill refused for another's says so alone, with
	// no line before it suggesting a fault is being injected.
	announced := false
	onStep := func(s bench.DrillStep) {
		if text && !announced {
			announced = true
			where := "an embedded engine over sims"
			if *admin != "" {
				where = engine.ShownURL(*admin)
			}
			fmt.Fprintf(stdout, "drill: %s fault against %s\n", *mode, where)
		}
		if text && s.State == bench.StepRunning && s.Summary != "" {
			fmt.Fprintln(stdout, bench.StepLine(s)) // what it waits for (readmission)
		}
		if text && s.State != bench.StepRunning {
			fmt.Fprintln(stdout, bench.StepLine(s))
			for _, ev := range s.Evidence {
				fmt.Fprintln(stdout, "      "+ev)
			}
		}
	}
	var rep *bench.DrillReport
	var err error
	if *admin != "" {
		rep, err = bench.Drill(ctx, cfg, onStep)
	} else {
		rep, err = bench.DrillEmbedded(ctx, cfg, e, benchengine.Start, onStep)
	}
	if rep == nil {
		return err
	}
	if !text {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if werr := enc.Encode(rep); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	fmt.Fprintf(stdout, "%s (%s)\n", rep.Verdict(), rep.Target)
	if rep.Cleanup != "" {
		fmt.Fprintln(stdout, "cleanup: "+rep.Cleanup)
	}
	return err
}
