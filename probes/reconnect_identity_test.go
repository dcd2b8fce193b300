package probes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint that fails one probe and answers again is asked its chain id
// before its head is taken again: a node restarted (or a URL re-pointed by
// its provider) may come back on another chain, and until its chain id is
// asked its heads and its answers pass for the pool's chain. The regular
// identity round is put out of reach (probes.identity_every 1000), so that
// only the reconnect rule can ask it: the head probe after the one that
// arms the flip fails, and the endpoint is on chain 5 from then on.
func TestProbes_AnEndpointBackFromAFailedProbeIsAskedItsChainIDFirst(t *testing.T) {
	right := startSim(t, sim.Config{Name: "mainnet", ChainID: 1})
	other := startSim(t, sim.Config{Name: "goerli", ChainID: 5})
	const (
		onRight = iota
		failNext
		onOther
	)
	var (
		mu    sync.Mutex
		armed bool
		state = onRight
		after []string // the methods asked once back, on chain 5
	)
	flip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage
			Method string
		}
		json.Unmarshal(body, &req)
		mu.Lock()
		s := state
		switch {
		case s == onRight && armed && req.Method == "eth_blockNumber":
			state = failNext
		case s == failNext:
			state = onOther
		case s == onOther:
			after = append(after, req.Method)
		}
		mu.Unlock()
		switch s {
		case onRight:
			right.ServeHTTP(w, r)
		case failNext:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"restarting"}}`, req.ID)
		default:
			other.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(flip.Close)
	r := newRig(t, func(c *engine.Config) {
		c.Probes.IdentityEvery = 1000
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "flip", URL: flip.URL})
	}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
	r.waitHeads()
	if ep := r.endpoint("flip"); len(ep.Exclusions) > 0 || !ep.Routable {
		t.Fatalf("flip on the pool's chain: exclusions %q, routable %v", ep.Exclusions, ep.Routable)
	}
	mu.Lock()
	armed = true
	mu.Unlock()

	r.waitEvent(10*time.Second, "flip excluded", headEvent("flip", engine.ExcludeWrongChain))
	mu.Lock()
	asked := slices.Clone(after)
	mu.Unlock()
	first := slices.Index(asked, "eth_chainId")
	if first != 0 {
		t.Fatalf("back on chain 5 after a failed probe, flip was asked %q: its chain id only after %d other probes", asked, first)
	}
	t.Logf("back on chain 5: asked %q before the exclusion was seen", asked)
}
