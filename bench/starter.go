package bench

// EndpointSpec is one upstream the engine should route to.
type EndpointSpec struct {
	Name, URL, Provider, Region string
}

// EngineSpec is everything bench needs configured in an engine: its
// endpoints and its hedging. The starter chooses everything else (loopback
// listeners on port 0, defaults for the rest).
type EngineSpec struct {
	Endpoints []EndpointSpec
	Hedge     HedgeSpec
}

// Engine is a running engine as bench sees it: two loopback URLs and a way
// to stop it.
type Engine struct {
	RPCURL   string // e.g. "http://127.0.0.1:40123"
	AdminURL string // serves GET /v1/status
	Stop     func() error
}

// EngineStarter starts a fresh engine for spec. bench may not import the
// engine package, so main.go (or a test) supplies this: build an
// engine.Config from spec with server.listen and server.admin on
// "127.0.0.1:0", then engine.New, Start, and return the bound addresses
// with Close as Stop.
type EngineStarter func(spec EngineSpec) (Engine, error)
