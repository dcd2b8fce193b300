package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// A key a view does not take says so; the status line never offers the
// panels' keys (tab, ?) inside a view that ignores them.

func TestTuningView_KeysItDoesNotTakeSaySo(t *testing.T) {
	m := tuningModel(healthySnapshot(), tuningDistribution(), 80, 24)
	if line := m.statusLineView(); strings.Contains(line, "tab") || !strings.Contains(line, "tuning view: ↑/↓ row, enter applies it, a auto, esc/q leaves") {
		t.Fatalf("status line in the tuning view: %q", line)
	}
	for _, k := range []string{"d", "+", "h", "tab", "?"} {
		got := press(t, m, k)
		if got.overlay != overlayTuning || !strings.HasPrefix(got.status.text, k+": not in the tuning view") {
			t.Fatalf("%s in the tuning view: overlay %d, status %q", k, got.overlay, got.status.text)
		}
	}
}

func TestDetail_KeysItDoesNotTakeSaySo(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 80, 24)
	m = press(t, m, "enter")
	if m.overlay != overlayDetail {
		t.Fatal("enter opened no detail")
	}
	ep, _ := m.selected()
	for _, k := range []string{"d", "f", "c", "h"} {
		got := press(t, m, k)
		if got.overlay != overlayDetail || !strings.HasPrefix(got.status.text, k+": not in the detail") || !strings.Contains(got.status.text, ep.Name) {
			t.Fatalf("%s in the detail: overlay %d, status %q", k, got.overlay, got.status.text)
		}
	}
}

// What a view says of its keys goes with it: after esc the status line
// read "d: not in the tuning view" under the panels, where d drains.
func TestView_AHintAboutAViewsKeysGoesWhenItCloses(t *testing.T) {
	tuning := press(t, tuningModel(healthySnapshot(), tuningDistribution(), 80, 24), "d")
	detail := press(t, press(t, fixedModel(healthySnapshot(), themes.Default(), 80, 24), "enter"), "d")
	for name, m := range map[string]Model{"tuning view": tuning, "detail": detail} {
		if !m.status.viewHint {
			t.Fatalf("%s: d said %q, not a hint about the view", name, m.status.text)
		}
		if got := press(t, m, "esc"); got.overlay != overlayNone || got.status.text != "" {
			t.Fatalf("%s closed: overlay %d, status %q", name, got.overlay, got.status.text)
		}
	}
	if got := press(t, detail, "enter"); got.overlay != overlayNone || got.status.text != "" {
		t.Fatalf("detail closed by enter: status %q", got.status.text)
	}
}
