// Package benchengine starts the engines `rpcdash bench` and the drill run
// against: an engine on loopback with its probes, built from a
// bench.EngineSpec. bench may not build one itself (it imports neither the
// probes nor main's wiring), so main hands it Start; bench's tests use the
// same Start, so that they run what users run.
package benchengine

import (
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/probes"
)

// Start gives bench and the drill a fresh engine: the engine's defaults,
// loopback listeners on port 0, the spec's endpoints and thresholds (a zero
// one leaves the default), hedging as the spec says (bench switches it
// through the admin API), and probes only with spec.ProbeInterval
// (independence checks ask no DNS: the sims are all on loopback).
func Start(spec bench.EngineSpec) (bench.Engine, error) {
	c := engine.Default()
	c.Server.Listen, c.Server.Admin = "127.0.0.1:0", "127.0.0.1:0"
	setIfGiven(&c.Breaker.Failures, spec.BreakerFailures)
	setIfGiven(&c.Breaker.Successes, spec.BreakerSuccesses)
	setIfGiven(&c.Breaker.Cooldown, spec.BreakerCooldown)
	setIfGiven(&c.Breaker.MaxCooldown, 4*spec.BreakerCooldown)
	setIfGiven(&c.Breaker.MaxCooldown, spec.BreakerMaxCooldown)
	setIfGiven(&c.Chain.MaxHeadLag, spec.MaxHeadLag)
	c.Hedge.Enabled = spec.Hedging
	if spec.NoErrorPenalty {
		c.Router.ErrorPenalty = 0
	}
	setIfGiven(&c.Hedge.MaxExtra, spec.MaxExtra)
	c.Probes.Enabled = spec.ProbeInterval > 0
	if c.Probes.Enabled {
		c.Probes.Interval, c.Probes.Timeout, c.Probes.ASN = spec.ProbeInterval, max(spec.ProbeInterval, 500*time.Millisecond), "off"
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

func setIfGiven[T comparable](field *T, v T) {
	var zero T
	if v != zero {
		*field = v
	}
}
