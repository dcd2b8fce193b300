// Package sim provides simulated JSON-RPC upstreams: real HTTP servers on
// loopback that answer a useful subset of the EVM and Solana JSON-RPC APIs.
//
// An Upstream promises:
//   - reproducible service times drawn from a lognormal model with an
//     optional uniform tail (fixed Config.Seed gives the same sequence;
//     Reseed restarts it);
//   - correlated tails: a share of tail events falls in incident windows
//     shared by every upstream on one clock (Epoch, Incidents), the overall
//     tail share unchanged; Counters say which windows held tails;
//   - a capacity: requests beyond Config.Capacity per second queue in
//     arrival order before their service time (Counters.Queued);
//   - Scenario: a pool of like upstreams from a handful of numbers, with
//     the flags `rpcdash sim` and `rpcdash bench` share and the sim:// URL
//     parameters that say the same;
//   - a chain head that advances with wall time (or an injected clock) and
//     is shared process-wide per chain and block time, so that HeadLag is
//     exactly the difference between two upstreams;
//   - live fault injection (HTTP 500, HTTP 429, hang, answers with a foreign
//     id, JSON-RPC server errors with HTTP 200, extra latency, random
//     error and rate-limit shares, frozen head, unhealthy node) through
//     setters and through POST /_sim/mode;
//   - exact, race-free counters, updated before the handler waits, with
//     WaitFor so tests can block until a count is reached without polling;
//   - a record of every write submission and of recent request params;
//   - answers shaped as a node's, so that client libraries read them as
//     they read a node's: EVM blocks and logs with every member geth gives
//     (ethers' formatters require them), eth_subscribe refused in geth's
//     words, a transaction taken mined in the next block (its receipt
//     given once a node's head reaches it, landed.go); a Solana sendTransaction answered with the transaction's own
//     first signature, which getSignatureStatuses then reports processed,
//     confirmed and finalized as the slots move, on every Solana upstream
//     of the process (a cluster's nodes all see a landed transaction);
//   - Close that releases hung handlers and returns only after every handler
//     goroutine has finished.
//
// Cancelled client requests stop at once and are counted in
// Counters.Cancelled. Error answers (mode or random) are immediate; latency
// applies only to answers that are served.
package sim
