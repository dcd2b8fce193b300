package main

import (
	"os"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/probes"
)

// startBenchEngine gives bench and the drill a fresh engine on loopback
// (bench may not build one itself). It starts from a zero Config, which
// engine.New fills with defaults, so that the spec's zero fields leave the
// defaults; hedging starts off, and bench switches it through the admin
// API. With spec.ProbeInterval it runs probes too (independence checks ask
// no DNS: the sims are all on loopback).
func startBenchEngine(spec bench.EngineSpec) (bench.Engine, error) {
	var c engine.Config
	c.Server.Listen, c.Server.Admin = "127.0.0.1:0", "127.0.0.1:0"
	c.Breaker.Failures, c.Breaker.Successes, c.Breaker.Cooldown = spec.BreakerFailures, spec.BreakerSuccesses, spec.BreakerCooldown
	c.Breaker.MaxCooldown = 4 * spec.BreakerCooldown
	c.Chain.MaxHeadLag = spec.MaxHeadLag
	c.Hedge.Enabled, c.Hedge.MaxExtra = spec.Hedging, spec.MaxExtra
	if spec.ProbeInterval > 0 {
		c.Probes.Enabled, c.Probes.Interval, c.Probes.Timeout, c.Probes.ASN = true, spec.ProbeInterval, max(spec.ProbeInterval, 500*time.Millisecond), "off"
	}
	for _, ep := range spec.Endpoints {
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: ep.Name, URL: ep.URL, Provider: ep.Provider, Region: ep.Region})
	}
	eng, err := engine.New(c, engine.Options{})
	if err != nil {
		return bench.Engine{}, err
	}
	if err := eng.Start(); err != nil {
		return bench.Engine{}, err
	}
	stop := eng.Close
	if c.Probes.Enabled {
		prober, err := probes.NewRunner(eng, eng.Config(), nil)
		if err != nil {
			eng.Close()
			return bench.Engine{}, err
		}
		prober.Start()
		stop = func() error {
			prober.Close()
			return eng.Close()
		}
	}
	return bench.Engine{RPCURL: "http://" + eng.RPCAddr(), AdminURL: "http://" + eng.AdminAddr(), Stop: stop}, nil
}

// stdio is the process's standard streams as bench and the drill take
// them: a progress bar only when stderr is a terminal.
func stdio(stdout, stderr interface{ Write([]byte) (int, error) }) bench.Stdio {
	f, ok := stderr.(*os.File)
	return bench.Stdio{In: os.Stdin, Out: stdout, Err: stderr, Terminal: ok && bench.IsTerminal(f)}
}
