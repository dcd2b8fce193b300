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

// A figure with nothing behind it is NaN, as Prometheus's own summaries give
// an empty quantile: a 0 drew "0 s latency, 0 % errors" on a dashboard for an
// endpoint nothing had been sent to.
func TestMetrics_FiguresWithNoDataAreNaNNotZero(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = false }, sim.Config{Latency: fixed(5 * time.Millisecond)})
	text := h.scrape()
	for _, series := range []string{
		`rpcdash_endpoint_latency_seconds{endpoint="s0",quantile="0.5"} `,
		`rpcdash_endpoint_latency_seconds{endpoint="s0",quantile="0.99"} `,
		`rpcdash_endpoint_error_rate{endpoint="s0"} `,
	} {
		if v, ok := metricValue(text, series); !ok || !math.IsNaN(v) {
			t.Errorf("before any attempt: %s= %v (present %v), want NaN", series, v, ok)
		}
	}
	for i := range 5 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	text = h.scrape()
	if v, ok := metricValue(text, `rpcdash_endpoint_latency_seconds{endpoint="s0",quantile="0.5"} `); !ok || !(v > 0) {
		t.Errorf("after 5 answers: p50 %v (present %v), want the answers' latency", v, ok)
	}
	if v, ok := metricValue(text, `rpcdash_endpoint_error_rate{endpoint="s0"} `); !ok || v != 0 {
		t.Errorf("after 5 answers: error rate %v (present %v), want 0", v, ok)
	}
}
