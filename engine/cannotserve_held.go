package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// A read every endpoint asked so far answered that it does not have the
// method (-32601 method not found, -32004 not supported) has its answer:
// the one a client of those endpoints gets at once. An endpoint left that
// has not answered the method lately is more likely to say the same than
// to serve it, so the read does not wait long on it:
//   - it is not sent to one that said lately it cannot serve the method or
//     is suspect (no answer to its latest attempt), nor to one out of
//     routing (an open breaker, a lagging or backing-off endpoint) as a
//     last resort;
//   - an attempt running on one that said so, or is suspect, is not waited
//     for; one on an endpoint that has not answered the method is waited
//     for only to its attempt deadline, not until it is proven hung, and
//     not asked again after it failed.
//
// With one endpoint unreachable, viem's estimateFeesPerGas (whose
// eth_maxPriorityFeePerGas the other two did not have) took 5 s a call
// (the connection attempt's bound), 3 s once its breaker was open (the
// failover to it as a last resort), and 10 s with two of three unreachable,
// where a client of either healthy endpoint had the -32601 in 20 ms. An
// endpoint that has answered the method lately is known to serve it: the
// read waits for it as for any other, last resort included.

// unservableHeld: the answer held is an endpoint's word that it does not
// have the method (-32601 method not found; EVM -32004 method not
// supported). Not another "cannot serve": a range or size limit is the
// request's, which an endpoint with a higher one may serve, and a -32600
// may refuse only the request's id, which another node reads.
func (x *execution) unservableHeld() bool {
	if x.fallback != nil || x.errAnswer == nil || x.errAnswer.rep.out != outUnsupported {
		return false
	}
	code := x.errAnswer.rep.info.ErrCode
	return code == jsonrpc.CodeMethodNotFound || code == jsonrpc.CodeMethodNotSupported && x.e.cfg.Chain.Kind == "evm"
}

// knownToServe: ep has answered the read's method lately and has not said
// since that it cannot serve it.
func (x *execution) knownToServe(ep *endpoint) bool {
	s, ok := ep.methods.lookup(x.p.method)
	return ok && !s.shared && s.cannotServeAt.Load() == 0 && s.latency.Count() > 0
}

// notServingSoon: ep's latest word on the read's method is that it cannot
// serve it, or it is suspect (its latest attempt got no answer, none
// heard since): it says nothing soon. An endpoint unreachable for a few
// seconds, its breaker not yet open, learnt a deadline at the request's
// ceiling from its connection attempts, and each read beside two -32601s
// waited 5 s for its connection to fail.
func (x *execution) notServingSoon(ep *endpoint) bool {
	if ep.suspect.Load() {
		return true
	}
	s, ok := ep.methods.lookup(x.p.method)
	return ok && !s.shared && s.cannotServeAt.Load() != 0
}

// notWorthAskingNow: candidate c is not asked while the read holds a
// "cannot serve": it is not serving soon (notServingSoon) or is out of
// routing, and it is not known to serve the method.
func (x *execution) notWorthAskingNow(c candidate) bool {
	return x.unservableHeld() && !x.knownToServe(c.ep) && (c.fallback && c.tier > 0 || x.notServingSoon(c.ep))
}

// waitsOnlyOnUnservable: the read holds a "cannot serve" answer and every
// live attempt is on an endpoint not known to serve the method.
func (x *execution) waitsOnlyOnUnservable() bool {
	return x.unservableHeld() && x.everyLive(func(a *attempt) bool { return !x.knownToServe(a.ep) })
}
