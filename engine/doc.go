// Package engine is rpcdash's routing and hedging core: it serves a local
// JSON-RPC port, ranks independent upstream endpoints by measured health,
// fails reads over, hedges slow reads, cuts broken endpoints out with
// circuit breakers and never sends a write twice.
//
// Promises:
//   - A single request's upstream answer reaches the client byte for byte;
//     request elements are forwarded as they came.
//   - A write is sent to exactly one endpoint, and to another only when the
//     first connection provably never carried it.
//   - Every attempt is recorded with its role (primary, hedge, failover) and
//     outcome; a loser cancelled because another attempt won is not a failure.
//   - State reaches the outside only through Snapshot (a deep copy of typed
//     values, free of side effects) and the control API; the admin HTTP API
//     is a thin layer over both, and status_json.go alone decides the wire
//     shape of /v1/status (existing fields never renamed or retyped).
//   - Every control action leaves an event naming its actor (console, admin,
//     engine); a fault's duration runs out on a timer of its own.
//   - The hedging model lives here, once: Forecast is a pure function of a
//     method's distributions (Distribution: buckets with exact and censored
//     counts and the product-limit survival the auto delay reads), and the
//     console, the admin API (tuning_json.go shapes its wire) and bench all
//     predict through it. A live hedging change starts a trial that puts the
//     prediction at the change beside what clients measured since.
//   - Secrets in endpoint URLs never leave the engine: names and redacted URLs
//     are all that logs, events, errors, status and metrics carry.
//
// The public surface, and nothing else (api_test.go checks that every
// exported name is used outside the package):
//   - construction: Default and Config with its sections, Options, New;
//     Engine's Start, Shutdown, Close, RPCAddr, AdminAddr, Config;
//   - the handlers: RPCHandler (the JSON-RPC port, with the response
//     headers Header*) and AdminHandler (the admin API and /metrics);
//   - the Snapshot and its parts (EndpointSnapshot, MethodStatus, …), and
//     Events (Event, EventType, Actor);
//   - the control API: Drain, Undrain, InjectFault (FaultSpec), ClearFault,
//     SetHedge (HedgeUpdate, ParseDelay, AutoDelay), each by an Actor;
//   - the probes' side: Probe, ObserveProbeHead, ObserveProbeNoHead,
//     Exclude/Include, SetIndependence (IndependenceInfo, Warning),
//     NeedsTrial;
//   - the hedging model: MethodDistribution, HedgeForecast (ForecastReport),
//     and Forecast over a Distribution (DistributionOf builds one);
//   - AdminClient: the admin API's client, for an attached console, bench
//     and the drill.
//
// Units with their own tests and no need of the engine's state live in
// engine/internal: jsonrpc (the codec and the chains' method tables),
// breaker, window (rolling latency and rate windows) and redact (URL
// secrets, upstream text). The engine imports no other rpcdash package.
package engine
