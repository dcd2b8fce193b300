// Package bench measures rpcdash the way a client sees it.
//
// It promises:
//   - an open-loop load generator (Run): arrivals are fixed before the run
//     (uniform or Poisson with a seed), every request is sent at its
//     scheduled time however slow the answers are, and each latency is taken
//     from the scheduled send time, so a stalled server cannot hide its stall
//     by slowing the client down (no coordinated omission). Load is bounded in
//     count and in time, and only loopback targets are accepted;
//   - a report (Summarize, WriteTable, JSON) of quantiles, errors,
//     incomplete requests, upstream attempts, amplification and hedge share,
//     built from the X-Rpcdash-* response headers;
//   - the fixed-distribution hedging model (Dist.Hedged*): with survival
//     S(t) of one attempt and one independent duplicate after delay d, the
//     completion time survives with S(t) before d and S(t)·S(t−d) after;
//   - a policy comparison (Compare): the same arrival schedule against fresh
//     sim upstreams and a fresh engine per hedging policy, side by side with
//     the model's prediction from the unhedged run.
//
// bench does not import the engine: Compare and Main start one through an
// EngineStarter that the caller supplies (main.go, or a test), and talk to it
// over HTTP like any client.
package bench
