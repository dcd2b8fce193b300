package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rpcdash/rpcdash/themes"
)

// The methods panel says which methods clients got errors on over the
// last minute: the header's count said an outage, not what it hit
// (console audit, stop 56). 9 of eth_call's 492 requests: 1.8 %.
func TestView_MethodsSayWhichMethodsClientsGotErrorsOn(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		v := ansi.Strip(fixedModel(incidentSnapshot(), themes.Default(), sz[0], sz[1]).View())
		head, call, number := "", "", ""
		for _, l := range strings.Split(v, "\n") {
			switch { // the methods panel's rows, before the events name them
			case head == "" && strings.Contains(l, "METHOD"):
				head = l
			case call == "" && strings.Contains(l, "eth_call"):
				call = l
			case number == "" && strings.Contains(l, "eth_blockNumber"):
				number = l
			}
		}
		if !strings.Contains(head, "ERR%") || !strings.Contains(call, "1.8%") || !strings.Contains(number, " 0% ") {
			t.Errorf("%dx%d: want an ERR%% column, eth_call at 1.8%%, eth_blockNumber at 0%%:\n%s", sz[0], sz[1], v)
		}
	}
}

// A method whose auto delay is at a quantile of its own shows that
// quantile as the pool row does: `auto` beside a p90 applied to the method
// alone read as the header's p95.
func TestMethods_AMethodsOwnAutoQuantileIsShown(t *testing.T) {
	snap := healthySnapshot()
	m := snap.Methods["eth_blockNumber"]
	h := *m.Hedge
	h.Quantile = 0.9
	m.Hedge = &h
	snap.Methods["eth_blockNumber"] = m
	other := snap.Methods["eth_call"]
	oh := *other.Hedge
	oh.DelaySource, oh.Quantile = "auto", 0.95 // the pool's: stays "auto"
	other.Hedge = &oh
	snap.Methods["eth_call"] = other
	view := ansi.Strip(fixedModel(snap, themes.Default(), 120, 36).View())
	var block, call string
	for _, l := range strings.Split(view, "\n") {
		switch {
		case strings.Contains(l, "eth_blockNumber") && strings.Contains(l, "read"):
			block = l
		case strings.Contains(l, "eth_call") && strings.Contains(l, "read"):
			call = l
		}
	}
	if !strings.Contains(block, "88ms p90") {
		t.Errorf("eth_blockNumber, auto at its own p90: %q", block)
	}
	if !strings.Contains(call, "auto") {
		t.Errorf("eth_call, auto at the pool's p95: %q", call)
	}
}
