package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"
)

// Main implements
//
//	rpcdash bench [--rate R] [--duration D] [--warmup W] [--policies off,auto]
//	              [--method M] [--params JSON] [--arrivals uniform|poisson]
//	              [--seed N] [--json]
//
// It runs the policy comparison on TailScenario's in-process sim upstreams,
// starting each engine through start, and writes the table (or JSON) to
// stdout. args exclude the "bench" word itself. SIGINT stops it early.
func Main(args []string, stdout io.Writer, start EngineStarter) error {
	fs := flag.NewFlagSet("rpcdash bench", flag.ContinueOnError)
	fs.SetOutput(stdout)
	rate := fs.Float64("rate", 100, "requests per second (open loop)")
	duration := fs.Duration("duration", 30*time.Second, "measured duration per policy")
	warmup := fs.Duration("warmup", 3*time.Second, "discarded warm-up per policy, at the same rate")
	policies := fs.String("policies", "off,auto", "comma-separated: off, auto, auto:Q, immediate, direct (no engine), or a fixed delay such as 120ms")
	method := fs.String("method", "eth_getBalance", "JSON-RPC method to send")
	params := fs.String("params", "", "JSON params array (default: one the sims accept for the method)")
	arrivals := fs.String("arrivals", "uniform", "arrival schedule: uniform or poisson")
	seed := fs.Int64("seed", 1, "seed of the Poisson schedule")
	asJSON := fs.Bool("json", false, "write JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected arguments %q", fs.Args())
	}
	if start == nil {
		return errors.New("bench: no engine starter")
	}
	if *duration > time.Hour || *warmup > time.Hour || *rate > 10000 {
		return errors.New("bench: keep --duration and --warmup within an hour and --rate within 10000/s")
	}
	pols, err := ParsePolicies(*policies)
	if err != nil {
		return err
	}
	arr, err := ParseArrivals(*arrivals)
	if err != nil {
		return err
	}
	p := DefaultParams(*method)
	if *params != "" {
		if !json.Valid([]byte(*params)) {
			return fmt.Errorf("bench: --params is not valid JSON")
		}
		p = json.RawMessage(*params)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg := CompareConfig{
		Upstreams: TailScenario(),
		Policies:  pols,
		Load:      Load{Method: *method, Params: p, Rate: *rate, Duration: *duration, Arrivals: arr, Seed: *seed},
		Warmup:    *warmup,
		Start:     start,
	}
	if !*asJSON {
		cfg.Progress = stdout
	}
	c, err := Compare(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return c.WriteJSON(stdout)
	}
	return c.WriteTable(stdout)
}
