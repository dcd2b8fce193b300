package bench_test

import (
	"testing"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startEngine is the EngineStarter the tests use, the same shape main.go
// builds: loopback listeners on port 0, the spec's endpoints and hedging,
// engine defaults for the rest.
func startEngine(spec bench.EngineSpec) (bench.Engine, error) {
	var c engine.Config
	c.Server.Listen = "127.0.0.1:0"
	c.Server.Admin = "127.0.0.1:0"
	c.Hedge.Enabled = spec.Hedge.Enabled
	c.Hedge.Delay = spec.Hedge.Delay
	c.Hedge.Quantile = spec.Hedge.Quantile
	c.Hedge.Budget = spec.Hedge.Budget
	c.Hedge.MaxExtra = spec.Hedge.MaxExtra
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
	return bench.Engine{RPCURL: "http://" + eng.RPCAddr(), AdminURL: "http://" + eng.AdminAddr(), Stop: eng.Close}, nil
}
