package probes

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The identity probe, asked every round, adds nothing to the head probe's
// RTT: it goes first and the head probe is timed from its own send, so an
// endpoint slow to say its chain id keeps a fast eth_blockNumber figure.
func TestProbes_ASlowIdentityAnswerAddsNothingToTheHeadProbesRTT(t *testing.T) {
	const slow = 300 * time.Millisecond
	node := startSim(t, sim.Config{Name: "node", ChainID: 1})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"eth_chainId"`)) {
			select {
			case <-time.After(slow):
			case <-req.Context().Done():
				return
			}
		}
		node.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)
	r := newSteppedRig(t, func(c *engine.Config) {
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "slowid", URL: front.URL})
	}, sim.Config{ChainID: 1})
	for range 5 {
		r.round("slowid")
	}
	ep := r.endpoint("slowid")
	id, head := ep.Methods["eth_chainId"].Latency, ep.Methods["eth_blockNumber"].Latency
	// The 5 rounds the test ran: the rig's first round, which waits on
	// every endpoint's first identity probe, recorded no head once in a
	// fresh-clone run.
	if id.Count < 5 || id.P50 < slow {
		t.Fatalf("the identity probes were not slow (%d, p50 %s): the test shows nothing", id.Count, id.P50)
	}
	if head.Count < 5 {
		t.Fatalf("%d head probes answered in 5 rounds: the test shows nothing", head.Count)
	}
	if head.Max >= slow {
		t.Fatalf("eth_blockNumber's figure holds the identity probe's time: %d answers, max %s (eth_chainId p50 %s)", head.Count, head.Max, id.P50)
	}
}
