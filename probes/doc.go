// Package probes watches the endpoints from outside the request path and
// reports what it finds to the engine.
//
// A Runner promises:
//   - one probe loop per endpoint, first probe at Start, then one round every
//     probes.interval, each probe judged by engine.Probe as a client
//     attempt is (a hang after probes.timeout, or the endpoint's learned
//     attempt deadline when longer; a later answer is late, not a failure);
//     at most one probe in flight per endpoint (a slow one delays the next);
//   - probes go through engine.Probe, so the fault layer, the endpoint's
//     windows and its breaker see them like client traffic;
//   - EVM: eth_chainId at start, on reconnect (the first round after a
//     failed probe) and every probes.identity_every rounds (default 1:
//     every round, so an endpoint moved to another chain while it keeps
//     answering is out within one probes.interval), then eth_blockNumber
//     every round, sent once the identity probe has ended so that its RTT
//     is its own; Solana: getGenesisHash likewise, getSlot and getHealth
//     every round;
//   - an endpoint on another chain than the pool's (the majority of first
//     answers, ties to the lowest-indexed endpoint) is excluded with a
//     message naming both chains, its heads are ignored, and it is readmitted
//     when it answers the pool's chain again; no head is reported before
//     every endpoint's first identity probe has ended;
//   - a Solana node whose getHealth is not "ok" is excluded until it is
//     (one answering it -32601, without the method, is not);
//   - independence checks (Checker: addresses, ASNs, TLS issuer and leaf,
//     provider and region, grouped into failure domains) at Start and every
//     probes.independence_interval, handed to engine.SetIndependence with
//     structured warnings ({endpoints, reason, text});
//   - Close cancels probes in flight and returns after every goroutine of the
//     Runner has ended.
package probes
