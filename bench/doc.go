// Package bench measures rpcdash the way a client sees it, and drills its
// failover.
//
// It promises:
//   - an open-loop load generator (Run): operations are scheduled before
//     the run (uniform or Poisson from a seed), every call is sent at its
//     scheduled time however slow the answers are, and each latency counts
//     from the scheduled send, so a stalled server cannot hide its stall by
//     slowing the client down (no coordinated omission). Calls draw their
//     methods from a weighted mix and carry params no other call shares; a
//     share of operations can go as a control tenant; an operation can fan
//     out to K calls completing at a quorum. Load is bounded in count and in
//     time, and only loopback targets are accepted unless told otherwise;
//   - a comparison (Compare): the same workload, seed and schedule for each
//     policy row (direct, routed without hedging, immediate duplication,
//     fixed delays, auto quantiles), switched through PUT /v1/hedge on a
//     fresh engine over the built-in sims or on a running rpcdash (--admin,
//     restored at the end), with figures over every call (errors and
//     timeouts included), errors split, deadline misses, 429 share, upstream
//     requests, amplification, wasted work, the hedging model's p99 and
//     extra load beside each delay (the engine's Forecast over the unhedged
//     row's answers, under the budget the rows ran with: the one model the
//     tuning view and the admin API use), the (1+h)·ρ load check, and
//     warnings for thin percentiles and a generator that fell behind; as a
//     table, markdown, CSV or JSON;
//   - a failover drill (Drill, DrillEmbedded): the failover seed's
//     verification plan run through the admin API and the JSON-RPC port of
//     an instance, judged on what they show (status, events, counters,
//     client errors), each step reported to a callback as it starts and
//     ends, the fault cleared whatever happens.
//
// bench does not build engines: Compare and DrillEmbedded start one through
// an EngineStarter that the caller supplies (main.go, or a test), and talk
// to it over HTTP like any client.
package bench
