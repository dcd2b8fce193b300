package engine_test

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// A node restarted onto an empty disk or resyncing from genesis answers
// eth_blockNumber 0x0 and block 0 as its latest. 0 meant "no head" to the
// engine: its last head was carried on at lag 0, it stayed routable, and
// its 0x0 went to clients (509 of 516 eth_blockNumber answers through
// rpcdash in an audit, none from its peers directly). Now its head is 0,
// the whole chain behind: its answers are set aside while another
// endpoint is asked, it leaves the tip's routing, and it is readmitted
// once it follows the chain again.
func TestHeads_AnEndpointBackAtGenesisIsBehindTheWholeChain(t *testing.T) {
	r := newHeadRig(t, 3, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	r.sims[0].SetHeadLag(1 << 62)
	if h := r.sims[0].Head(); h != 0 {
		t.Fatalf("s0's head %d; the test needs 0", h)
	}
	// Before any probe: its answers are what find it out.
	var top int64
	for i := range 12 {
		rep := r.call(200+i, "eth_getBlockByNumber", "pending", false)
		mustOK(t, rep)
		if n := blockNumberOf(t, rep); n == 0 {
			t.Fatalf("the pending block %d from %s: block 0", i, rep.endpoint)
		}
	}
	for i := range 12 {
		r.blockNumber(i)
		top, _ = r.latestBlock(100+i, "eth_getBlockByNumber", top)
	}
	r.probeAll()
	ep, st := r.endpoint("s0"), r.status()
	if ep.Head != 0 || ep.Lag != st.MaxHead || !ep.LagExcluded || !strings.Contains(ep.LastError, "head 0 (genesis)") {
		t.Fatalf("s0 at genesis: head %d lag %d (pool head %d), lag_excluded %v, last error %q; want head 0, the whole chain behind, excluded",
			ep.Head, ep.Lag, st.MaxHead, ep.LagExcluded, ep.LastError)
	}
	for i := range 12 {
		if _, rep := r.blockNumber(200 + i); rep.endpoint == "s0" {
			t.Fatal("eth_blockNumber answered by s0 at genesis")
		}
	}
	r.sims[0].SetHeadLag(0)
	for range r.eng.Config().Probes.Recover {
		r.round()
	}
	if ep := r.endpoint("s0"); ep.LagExcluded || ep.Head != r.realHead() {
		t.Fatalf("s0 back at the chain's head: head %d (real %d), lag_excluded %v", ep.Head, r.realHead(), ep.LagExcluded)
	}
}
