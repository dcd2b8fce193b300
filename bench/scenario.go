package bench

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// TailScenario is issue 3's workload: three independent upstreams (their
// own seeds), each lognormal with median 50 ms and sigma 0.3, plus a 2 %
// tail uniform in 500–1000 ms.
func TailScenario() []sim.Config {
	lat := sim.Latency{Median: 50 * time.Millisecond, Sigma: 0.3, TailProb: 0.02,
		TailMin: 500 * time.Millisecond, TailMax: time.Second}
	out := make([]sim.Config, 3)
	for i := range out {
		out[i] = sim.Config{Name: fmt.Sprintf("sim%d", i), Latency: lat, Seed: int64(101 + i)}
	}
	return out
}

// DefaultParams are params a sim upstream accepts for method.
func DefaultParams(method string) json.RawMessage {
	switch method {
	case "eth_getBalance", "eth_getTransactionCount", "eth_getCode":
		return json.RawMessage(`["0x00000000000000000000000000000000000000aa","latest"]`)
	case "eth_call":
		return json.RawMessage(`[{"to":"0x00000000000000000000000000000000000000aa","data":"0x"},"latest"]`)
	case "eth_getBlockByNumber":
		return json.RawMessage(`["latest",false]`)
	}
	return json.RawMessage("[]")
}
