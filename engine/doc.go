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
// The engine imports no other rpcdash package.
package engine
