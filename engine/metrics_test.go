package engine_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// rpcdash_endpoint_latency_seconds{quantile} is the status's latency
// (README), every percentile of it: p99.9 was missing, and so was its
// _lower_bound.
func TestMetrics_EndpointLatencyHasEveryPercentileOfTheStatus(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(10 * time.Millisecond)})
	for i := range 20 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	text := h.scrape()
	lat := h.endpoint("s0").Latency
	for i, q := range []string{engine.PctP50: "0.5", engine.PctP90: "0.9", engine.PctP95: "0.95", engine.PctP99: "0.99", engine.PctP999: "0.999"} {
		labels := `{endpoint="s0",quantile="` + q + `"} `
		v, ok := metricValue(text, "rpcdash_endpoint_latency_seconds"+labels)
		if want := lat.Percentile(i).Seconds(); !ok || math.Abs(v-want) > 1e-9 {
			t.Errorf("rpcdash_endpoint_latency_seconds%s= %v (present %v), want the status's %v", labels, v, ok, want)
		}
		if _, ok := metricValue(text, "rpcdash_endpoint_latency_lower_bound"+labels); !ok {
			t.Errorf("no rpcdash_endpoint_latency_lower_bound%s", labels)
		}
	}
}

// metricValue is the value of the line of text that starts with series.
func metricValue(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}
