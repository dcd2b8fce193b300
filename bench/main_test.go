package bench_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/probes"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startEngine is the EngineStarter the tests use, the same shape main.go
// builds: loopback listeners on port 0, the spec's endpoints and
// thresholds, hedging off, probes when asked, engine defaults for the rest.
func startEngine(spec bench.EngineSpec) (bench.Engine, error) {
	var c engine.Config
	c.Server.Listen = "127.0.0.1:0"
	c.Server.Admin = "127.0.0.1:0"
	c.Breaker.Failures, c.Breaker.Successes, c.Breaker.Cooldown = spec.BreakerFailures, spec.BreakerSuccesses, spec.BreakerCooldown
	c.Breaker.MaxCooldown = 4 * spec.BreakerCooldown
	c.Chain.MaxHeadLag = spec.MaxHeadLag
	c.Hedge.Enabled = spec.Hedging
	if spec.ProbeInterval > 0 {
		c.Probes.Enabled, c.Probes.Interval, c.Probes.Timeout, c.Probes.ASN = true, spec.ProbeInterval, max(spec.ProbeInterval, 500*time.Millisecond), "off"
	}
	for _, e := range spec.Endpoints {
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: e.Name, URL: e.URL, Provider: e.Provider, Region: e.Region})
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
		p, err := probes.NewRunner(eng, eng.Config(), nil)
		if err != nil {
			eng.Close()
			return bench.Engine{}, err
		}
		p.Start()
		stop = func() error { p.Close(); return eng.Close() }
	}
	return bench.Engine{RPCURL: "http://" + eng.RPCAddr(), AdminURL: "http://" + eng.AdminAddr(), Stop: stop}, nil
}
