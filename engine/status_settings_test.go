package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The status says how far back an endpoint's latencies and rates reach
// (server.stats_window), so that the console can label its endpoint
// columns, in process and attached alike.
func TestStatus_SettingsSayTheStatsWindow(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.StatsWindow = 2 * time.Minute }, sim.Config{})
	if got := h.eng.Snapshot().Settings.StatsWindow; got != 2*time.Minute {
		t.Fatalf("Snapshot's stats window %v, want 2m", got)
	}
	code, b := h.adminDo("GET", "/v1/status", "")
	var doc struct {
		Settings struct {
			StatsWindow   string  `json:"stats_window"`
			StatsWindowMS float64 `json:"stats_window_ms"`
		} `json:"settings"`
	}
	if code != 200 || json.Unmarshal(b, &doc) != nil || doc.Settings.StatsWindow != "2m0s" || doc.Settings.StatsWindowMS != 120000 {
		t.Fatalf("HTTP %d, settings %+v, want stats_window 2m0s and stats_window_ms 120000", code, doc.Settings)
	}
	var attached engine.Snapshot
	if err := json.Unmarshal(b, &attached); err != nil || attached.Settings.StatsWindow != 2*time.Minute {
		t.Fatalf("read back by an attached console: %v, %v", attached.Settings.StatsWindow, err)
	}
}
