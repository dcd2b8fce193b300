package bench

import "time"

// EndpointSpec is one upstream the engine should route to.
type EndpointSpec struct {
	Name, URL, Provider, Region string
}

// EngineSpec is what bench and the drill need configured in an engine they
// start; zero fields leave the engine's defaults. The starter chooses the
// rest: loopback listeners on port 0, hedging off until the admin API
// switches it, defaults for everything else.
type EngineSpec struct {
	Endpoints []EndpointSpec
	Hedging   bool // hedging on from the start (the drill); bench switches it
	MaxExtra  int  // hedge.max_extra (0: the default)
	// The drill's thresholds, so that an embedded drill runs in seconds.
	BreakerFailures  int
	BreakerSuccesses int
	BreakerCooldown  time.Duration
	// BreakerMaxCooldown caps the cooldown a failed trial or a flap
	// doubles (breaker.max_cooldown); 0: 4 × BreakerCooldown.
	BreakerMaxCooldown time.Duration
	// ProbeInterval > 0 runs active probes at that interval (they then take
	// the half-open trials and watch the head); 0 runs none.
	ProbeInterval time.Duration
	MaxHeadLag    int64
	// NoErrorPenalty sets router.error_penalty to 0: failures weigh
	// nothing on the routing cost (a test that faults an endpoint and then
	// needs it ranked first again at once).
	NoErrorPenalty bool
}

// Engine is a running engine as bench sees it: two loopback URLs and a way
// to stop it.
type Engine struct {
	RPCURL   string // e.g. "http://127.0.0.1:40123"
	AdminURL string // the admin API
	Stop     func() error
}

// EngineStarter starts a fresh engine for spec. bench does not build
// engines itself (it imports no probes: internal/benchengine wires the
// engine and its probes, for main and for bench's tests), so the caller
// supplies this.
type EngineStarter func(spec EngineSpec) (Engine, error)
