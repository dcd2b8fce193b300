package probes

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// Runner runs active probes and independence checks against an engine.
type Runner struct {
	eng     *engine.Engine
	cfg     engine.Config
	log     *slog.Logger
	checker *Checker
	targets []Target
	ids     *identityTracker
	probers []*prober

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	startOnce sync.Once
}

// NewRunner prepares probes for every endpoint of cfg, which is the engine's
// own configuration (eng.Config(), defaults filled). It fails on a chain
// kind it cannot probe, a non-positive interval, timeout or identity_every,
// or an independence setting the Checker rejects (such as an unreadable
// asn_db).
func NewRunner(eng *engine.Engine, cfg engine.Config, log *slog.Logger) (*Runner, error) {
	if eng == nil {
		return nil, errors.New("probes: no engine")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := cfg.Probes
	if p.Interval <= 0 || p.Timeout <= 0 || p.IndependenceInterval <= 0 || p.IdentityEvery <= 0 {
		return nil, errors.New("probes: probes.interval, probes.timeout, probes.independence_interval and probes.identity_every must be positive")
	}
	spec, err := specFor(cfg.Chain.Kind)
	if err != nil {
		return nil, err
	}
	checker, err := NewChecker(CheckerOptions{Resolver: p.Resolver, ASN: p.ASNMode(), ASNDB: p.ASNDB, Timeout: p.Timeout})
	if err != nil {
		return nil, err
	}
	r := &Runner{eng: eng, cfg: cfg, log: log, checker: checker}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	names := make([]string, 0, len(cfg.Endpoints))
	for _, e := range cfg.Endpoints {
		names = append(names, e.Name)
		r.targets = append(r.targets, Target{Name: e.Name, URL: e.URL, Provider: e.Provider, Region: e.Region, Proxied: e.Proxy != ""})
	}
	// A configured chain identity (a proposed chain.chain_id) would be the
	// last argument; until then the pool's majority decides.
	fixed := ""
	switch {
	case cfg.Chain.Kind == "evm" && cfg.Chain.ChainID != 0:
		fixed = "0x" + strconv.FormatUint(cfg.Chain.ChainID, 16)
	case cfg.Chain.Kind == "solana" && cfg.Chain.GenesisHash != "":
		fixed = cfg.Chain.GenesisHash
	}
	r.ids = newIdentityTracker(spec, eng, names, fixed)
	// Clients' own identity answers are judged as a probe's are: an
	// endpoint moved to another chain is found out by the first of them.
	eng.WatchIdentity(spec.identityMethod, func(name string, body []byte) {
		if id, ok := spec.parseIdentity(body); ok {
			r.ids.record(name, id)
		}
	})
	for _, n := range names {
		r.probers = append(r.probers, &prober{name: n, eng: eng, spec: spec, ids: r.ids,
			interval: p.Interval, identityEvery: p.IdentityEvery, log: log, needIdentity: true})
	}
	return r, nil
}

// Start launches one probe loop per endpoint, each probing at once, and the
// independence checks, which run at once and then every
// probes.independence_interval. Calling it again does nothing.
func (r *Runner) Start() {
	r.startOnce.Do(func() {
		if r.ctx.Err() != nil {
			return // closed before it started
		}
		r.eng.UseProbeTrials()
		for _, p := range r.probers {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				p.run(r.ctx)
			}()
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.independenceLoop(r.ctx)
		}()
	})
}

// Close stops every loop, cancelling probes in flight, and returns when all
// of the runner's goroutines have ended.
func (r *Runner) Close() {
	r.cancel()
	r.startOnce.Do(func() {}) // a Start after Close must not launch anything
	r.wg.Wait()
}

func (r *Runner) independenceLoop(ctx context.Context) {
	repeat(ctx, func() time.Duration {
		r.checkIndependence(ctx)
		return r.cfg.Probes.IndependenceInterval
	})
}

// checkIndependence runs one check and hands it to the engine; a check cut
// short by Close is dropped rather than reported as failures.
func (r *Runner) checkIndependence(ctx context.Context) {
	rep := r.checker.Check(ctx, r.targets)
	if ctx.Err() != nil {
		return
	}
	info, domains, warnings := engineIndependence(rep)
	r.eng.SetIndependence(info, domains, warnings)
	r.log.Debug("independence checked", "domains", rep.DomainCount, "warnings", len(warnings))
}
