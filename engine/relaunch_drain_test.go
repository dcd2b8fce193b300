package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// heldReads is two scripted endpoints, a and b, that hold every
// eth_getBalance until the test lets them answer, and say which endpoint
// each one reached.
type heldReads struct {
	arrived chan string
	release chan struct{}
}

func newHeldReads(t *testing.T) (*heldReads, []string) {
	hr := &heldReads{arrived: make(chan string, 16), release: make(chan struct{})}
	var urls []string
	for _, name := range []string{"a", "b"} {
		srv := scriptedUpstream(t, func(w http.ResponseWriter, id json.RawMessage, method string) bool {
			if method != "eth_getBalance" {
				return false
			}
			hr.arrived <- name
			<-hr.release
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, id)
			return true
		})
		urls = append(urls, srv.URL)
	}
	t.Cleanup(func() {
		select {
		case <-hr.release:
		default:
			close(hr.release)
		}
	})
	return hr, urls
}

// A hedge sent once every candidate has an attempt (hedge.max_extra as
// large as the pool) asks again an endpoint already working on the read:
// never one an operator drained since, whose drain stops new traffic. The
// read was ranked with both endpoints in; its primary's endpoint is
// drained, then its first hedge goes to the other, and its second, a
// delay later, must go there again. Before: it went to the drained one,
// ranked first when the read came.
func TestDrain_AHedgeAskingAgainSkipsAnEndpointDrainedMeanwhile(t *testing.T) {
	t.Parallel()
	hr, urls := newHeldReads(t)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{
			{Name: "a", URL: urls[0], Provider: "pa", Region: "ra"},
			{Name: "b", URL: urls[1], Provider: "pb", Region: "rb"},
		}
		c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.MaxExtra = true, "1s", 2
		c.Hedge.Budget, c.Hedge.BudgetBurst = 1, 1000
		c.Server.RequestTimeout = 20 * time.Second
		// No deadline race: only the hedges ask.
		c.Breaker.AttemptTimeoutMin = 15 * time.Second
	})
	got := make(chan reply, 1)
	go func() { got <- h.call(1, "eth_getBalance", addr, "latest") }()
	first := <-hr.arrived
	other := map[string]string{"a": "b", "b": "a"}[first]
	if err := h.eng.Drain(engine.ActorAdmin, first); err != nil {
		t.Fatal(err)
	}
	if hedge := <-hr.arrived; hedge != other {
		t.Fatalf("first hedge sent to %s, want %s (%s drained, working on the primary)", hedge, other, first)
	}
	// The second hedge, a delay later, asks again one already working on it.
	var second string
	select {
	case second = <-hr.arrived:
	case <-time.After(10 * time.Second):
	}
	close(hr.release)
	mustOK(t, <-got)
	if second == first {
		t.Fatalf("second hedge asked %s again, drained since the read came; want %s or none", first, other)
	}
}
