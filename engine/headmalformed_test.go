package engine_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An eth_blockNumber answered with something that is not a block number
// ("0x", a JSON number), or a latest block numbered so, was relayed as it
// came; now it is the endpoint's failure, and the read is answered by
// another.
func TestHeads_AHeadThatIsNotABlockNumberIsTheEndpointsFailure(t *testing.T) {
	for _, bad := range []string{`"0x"`, `218688000`, `null`} {
		t.Run(bad, func(t *testing.T) {
			t.Parallel()
			// s1 is far slower, so that the router asks s0 first: at 5 ms, a
			// loaded machine measured s0 (1 ms) no faster, every read went
			// to s1 and s0 was never asked (its last error "").
			h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(100 * time.Millisecond)})
			front := simFront(t, h.sims[0], func(w http.ResponseWriter, body []byte) bool {
				var msg struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(body, &msg) == nil && msg.Method == "eth_blockNumber" {
					w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":` + bad + `}`))
					return true
				}
				if msg.Method == "eth_getBlockByNumber" && bad != "null" {
					w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"number":` + bad + `,"hash":"0x01"}}`))
					return true
				}
				return false
			})
			h2 := frontedPair(t, front, h.sims[1].URL(), func(c *engine.Config) { c.Router.ErrorPenalty = 0 })
			if bad != "null" {
				for i := range 10 {
					r := h2.call(100+i, "eth_getBlockByNumber", "latest", false)
					mustOK(t, r)
					if n := blockNumberOf(t, r); n == 0 {
						t.Fatalf("latest block %d answered by %s with number %s", i, r.endpoint, bad)
					}
				}
			}
			for i := range 10 {
				r := h2.call(i, "eth_blockNumber")
				mustOK(t, r)
				if s := resultString(t, r); !strings.HasPrefix(s, `"0x`) || len(s) < 5 {
					t.Fatalf("eth_blockNumber %d answered %s by %s", i, s, r.endpoint)
				}
			}
			if ep := h2.endpoint("s0"); !strings.Contains(ep.LastError, "not a block number") {
				t.Fatalf("s0's last error %q (%d primaries, %d failovers)", ep.LastError, ep.Accounting.Primary, ep.Accounting.Failover)
			}
		})
	}
}
