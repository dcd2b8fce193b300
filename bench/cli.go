package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/cli"
	"github.com/rpcdash/rpcdash/sim"
)

// Stdio is where a command reads and writes; Terminal says whether Err is
// a terminal (progress bars only there).
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
	Terminal bool
	// Flags makes the flag set Main defines its flags on (rpcdash's, with
	// its usage line and where its output goes); nil: one of Main's own,
	// writing to Err.
	Flags func() *flag.FlagSet
}

// Remote targets are rate-capped: bench is a tool for this machine.
const (
	remoteMaxRate     = 10.0 // calls per second
	remoteMaxDuration = 10 * time.Minute
)

// Main implements `rpcdash bench` (see the README's Benchmarks section for
// every flag). args exclude the "bench" word itself. It prints how long the
// run will take before it starts, a progress bar on a terminal, and the
// report to --out or stdout. ctx ending (main's on SIGINT or SIGTERM)
// stops it early (an --admin instance's hedging is restored all the same).
func Main(ctx context.Context, args []string, stdio Stdio, start EngineStarter) error {
	fs := flag.NewFlagSet("rpcdash bench", flag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage:\n  rpcdash bench [flags]\n\nflags:\n")
		fs.PrintDefaults()
	}
	if stdio.Flags != nil {
		fs = stdio.Flags()
	}
	scenario := sim.TailScenario()
	scenario.RegisterFlags(fs)
	mix := fs.String("mix", "eth_getBalance=1", "methods and weights, method=weight,…; each call gets unique params")
	method := fs.String("method", "", "one method (the same as --mix METHOD=1)")
	params := fs.String("params", "", "a JSON params array sent with every call instead of unique ones")
	arrivals := fs.String("arrivals", "uniform", "arrival schedule: uniform or poisson")
	rate := fs.Float64("rate", 100, "operations per second (open loop)")
	duration := fs.Duration("duration", 30*time.Second, "measured span of each row")
	count := fs.Int("count", 0, "measured operations per row, instead of --duration")
	warmup := fs.Duration("warmup", 3*time.Second, "warm-up before each row's measured span, at the same rate, not measured")
	fanout := fs.String("fanout", "1", "K or K/Q: an operation of K parallel calls completes when all (or Q) answer")
	batch := fs.Int("batch", 0, "K: an operation is one JSON-RPC batch of K calls (at most 1000), instead of --fanout's parallel requests")
	control := fs.Float64("control-share", 0, "share of operations sent as an unhedged control tenant, alongside")
	timeout := fs.Duration("timeout", defaultTimeout, "per call, from its scheduled send (at most 1h)")
	deadline := fs.Duration("deadline", 0, "count calls not answered within this as deadline misses (0: none)")
	maxExtra := fs.Int("max-extra", 1, "hedge.max_extra of the engine in front of the built-in sims: hedges per request, a delay apart (1 to 8)")
	policies := fs.String("policies", "direct,off,immediate", "rows: direct, off, immediate, auto, auto:Q, or a fixed delay")
	delays := fs.String("delays", "100ms", "fixed-delay rows, a list")
	quantiles := fs.String("quantiles", "0.9,0.95,0.99", "auto rows, a list of quantiles")
	target := fs.String("target", "", "a JSON-RPC URL to load instead of the built-in sims (one row; with --admin, every policy)")
	admin := fs.String("admin", "", "admin URL of the rpcdash at --target: rows switch its policy through PUT /v1/hedge")
	cli.TokenFlag(fs, "admin-token", "bearer token of --admin")
	controlTarget := fs.String("control-target", "", "where the control tenant goes with --target (a JSON-RPC URL that does not hedge)")
	allowRemote := fs.Bool("allow-remote", false, "allow a --target off this machine (rate-capped, asks to confirm)")
	yes := fs.Bool("yes", false, "confirm a remote --target without asking")
	format := fs.String("format", "table", "table, markdown, csv or json")
	asJSON := fs.Bool("json", false, "the same as --format json")
	out := fs.String("out", "", "write the report to this file instead of stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("bench: unexpected arguments %q", fs.Args())
	}
	given := cli.Given(fs)
	token := cli.TokenOf(fs, "admin-token")
	// Every value is checked before anything is sent: a bad one is a usage
	// error (exit 2) naming its flag, and a value given is never taken for
	// "the default" (--count 0, --timeout 0s).
	switch {
	case *asJSON && given["format"] && *format != "json":
		return cli.Usagef("bench: --json and --format %s disagree", *format)
	case *asJSON:
		*format = "json"
	}
	switch {
	case !slices.Contains(Formats, *format):
		return cli.Usagef("bench: --format: %q is not one of %s", *format, strings.Join(Formats, ", "))
	case *maxExtra < 1 || *maxExtra > 8:
		return cli.Usagef("bench: --max-extra: want 1 to 8, got %d", *maxExtra)
	case given["count"] && *count < 1:
		return cli.Usagef("bench: --count: want at least 1 (without it, each row runs for --duration), got %d", *count)
	case given["count"] && given["duration"]:
		return cli.Usagef("bench: --count and --duration: give one (a row measures --count operations, or for --duration)")
	case *timeout <= 0 || *timeout > time.Hour:
		return cli.Usagef("bench: --timeout: want (0s, 1h], got %s", *timeout)
	case *deadline < 0 || *deadline > time.Hour:
		return cli.Usagef("bench: --deadline: want [0s, 1h] (0s: none), got %s", *deadline)
	case given["mix"] && given["method"]:
		return cli.Usagef("bench: give --mix or --method, not both")
	case given["admin-token"] && *admin == "":
		return cli.Usagef("bench: --admin-token goes with --admin")
	case given["control-target"] && *target == "":
		return cli.Usagef("bench: --control-target goes with --target; on the built-in sims the control tenant goes to the sims directly")
	case given["control-target"] && !(*control > 0):
		return cli.Usagef("bench: --control-target goes with --control-share: it is where that share of operations goes, and the share is 0")
	case given["allow-remote"] && *target == "":
		return cli.Usagef("bench: --allow-remote goes with --target; the built-in sims are on this machine")
	case given["yes"] && !*allowRemote:
		return cli.Usagef("bench: --yes goes with --allow-remote: it confirms a target off this machine, which only --allow-remote lets through")
	}
	if err := scenario.ValidateFlags(given); err != nil {
		return cli.Usage(fmt.Errorf("bench: %w", err))
	}
	if err := cli.BaseURLs("bench", cli.URLFlag{Name: "--target", Value: target, JSONRPC: true}, cli.URLFlag{Name: "--admin", Value: admin},
		cli.URLFlag{Name: "--control-target", Value: controlTarget, JSONRPC: true}); err != nil {
		if *admin != "" && *target == "" { // what validate would say next: both are said
			return cli.Usage(errors.Join(err, errAdminNeedsTarget))
		}
		return err
	}
	cfg := CompareConfig{Scenario: scenario, Deadline: *deadline, MaxExtra: *maxExtra, Start: start,
		Target: Target{URL: *target, Admin: Admin{URL: *admin, Token: token}, ControlURL: *controlTarget,
			AllowRemote: *allowRemote, Capacity: scenario.Capacity}}
	var err error
	w := &cfg.Workload
	w.Rate, w.Duration, w.Count, w.Warmup, w.Seed, w.ControlShare, w.Timeout = *rate, *duration, *count, *warmup, scenario.Seed, *control, *timeout
	if *method != "" {
		*mix = *method
	}
	if w.Mix, err = ParseMix(*mix); err != nil {
		return cli.Usage(err)
	}
	if w.Arrivals, err = ParseArrivals(*arrivals); err != nil {
		return cli.Usage(err)
	}
	if w.Fanout, err = ParseFanout(*fanout); err != nil {
		return cli.Usage(err)
	}
	if given["batch"] {
		// Any --fanout, 1 included: a batch of K calls is not an operation
		// of one call, and the value given would go unread.
		if given["fanout"] {
			return cli.Usagef("bench: --batch and --fanout: give one (a batch is one request of K calls, a fan-out K requests)")
		}
		w.Fanout, w.Batch = Fanout{K: *batch, Q: *batch}, true
		if err := w.Fanout.validateBatch(); err != nil {
			return cli.Usage(err)
		}
	}
	if *params != "" {
		if !json.Valid([]byte(*params)) || !strings.HasPrefix(strings.TrimSpace(*params), "[") {
			return cli.Usagef("bench: --params is not a JSON array")
		}
		cfg.Params = json.RawMessage(*params)
	}
	if *admin != "" && !given["policies"] {
		*policies = "off,immediate"
	}
	if cfg.Policies, err = ParsePolicies(*policies, *delays, *quantiles); err != nil {
		return cli.Usage(err)
	}
	if *target != "" && *admin == "" {
		for _, name := range []string{"policies", "delays", "quantiles"} {
			if given[name] {
				return cli.Usagef("bench: --%s chooses rows through --admin; a bare --target is one row", name)
			}
		}
	}
	if *target != "" {
		for _, name := range append([]string{"max-extra"}, sim.ScenarioFlags...) {
			if given[name] && name != "capacity" && name != "seed" {
				return cli.Usagef("bench: --%s describes the built-in sims; it means nothing with --target", name)
			}
		}
	}
	if given["max-extra"] && !slices.ContainsFunc(cfg.Policies, Policy.Hedged) {
		return cli.Usagef("bench: --max-extra goes with a hedged row (--policies immediate, auto or a delay, --delays, --quantiles): no row here sends a duplicate")
	}
	if err := sim.InertFlag(given, scenario.Latency); err != nil {
		return cli.Usage(fmt.Errorf("bench: %w", err))
	}
	if err := cfg.validate(); err != nil {
		return cli.Usage(err)
	}
	if err := confirmRemote(cfg, *yes, stdio); err != nil {
		return err
	}
	if err := cfg.reachable(ctx); err != nil {
		return err
	}

	var file *os.File
	if *out != "" {
		// Created before the run: a bad path fails now, not after it.
		if file, err = os.Create(*out); err != nil {
			return fmt.Errorf("bench: --out: %w", err)
		}
		defer file.Close()
	}
	rows := len(cfg.Rows())
	fmt.Fprintf(stdio.Err, "rpcdash bench: %d row(s) × (%s warm-up + %s measured): about %s\n",
		rows, w.Warmup, w.Measured(), cfg.Duration().Round(time.Second))
	if stdio.Terminal {
		cfg.Progress = NewProgress(stdio.Err)
	}
	c, runErr := Compare(ctx, cfg)
	if c == nil {
		if file != nil {
			file.Close()
			os.Remove(*out) // no empty report left behind
		}
		return runErr
	}
	// The report is written either way, of the rows that ran when the run
	// was interrupted (the error then says so); a row whose calls got no
	// answer at all fails the run (exit 1).
	if runErr == nil {
		runErr = c.Unanswered()
	}
	if file != nil {
		if err := c.Write(file, *format); err != nil {
			return err
		}
		fmt.Fprintf(stdio.Err, "rpcdash bench: wrote %s\n", *out)
		if err := file.Close(); err != nil {
			return err
		}
		return runErr
	}
	if err := c.Write(stdio.Out, *format); err != nil {
		return err
	}
	return runErr
}

// confirmRemote lets a target off this machine through only rate-capped,
// bounded, and confirmed (--yes, or "yes" typed on the terminal).
func confirmRemote(cfg CompareConfig, yes bool, stdio Stdio) error {
	var remote []string
	for _, raw := range []string{cfg.Target.URL, cfg.Target.Admin.URL, cfg.Target.ControlURL} {
		if u, err := url.Parse(raw); raw != "" && err == nil && !isLoopbackHost(u.Hostname()) {
			remote = append(remote, engine.ShownHost(u.Host))
		}
	}
	if len(remote) == 0 {
		return nil
	}
	w := cfg.Workload
	calls := w.Rate * float64(w.Fanout.calls())
	switch {
	case !cfg.Target.AllowRemote:
		return fmt.Errorf("bench: %s is not this machine: bench only loads loopback unless --allow-remote", strings.Join(remote, ", "))
	case calls > remoteMaxRate:
		return fmt.Errorf("bench: a remote target takes at most %g calls per second; --rate %g × %d calls is %g", remoteMaxRate, w.Rate, w.Fanout.calls(), calls)
	case cfg.Duration() > remoteMaxDuration:
		return fmt.Errorf("bench: a remote target is loaded for at most %s; this run takes %s", remoteMaxDuration, cfg.Duration())
	}
	total := int(calls * cfg.Duration().Seconds())
	fmt.Fprintf(stdio.Err, "rpcdash bench: about to send about %d calls over %s to %s, which is not this machine.\n", total, cfg.Duration().Round(time.Second), strings.Join(remote, ", "))
	if yes {
		return nil
	}
	if stdio.In == nil || !stdio.Terminal {
		return errors.New("bench: a remote target must be confirmed: run on a terminal, or pass --yes")
	}
	fmt.Fprint(stdio.Err, "Type yes to go on: ")
	line, _ := bufio.NewReader(stdio.In).ReadString('\n')
	if strings.TrimSpace(line) != "yes" {
		return errors.New("bench: not confirmed; nothing sent")
	}
	return nil
}
