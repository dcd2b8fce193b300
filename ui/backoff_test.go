package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/themes"
)

// A 429 with Retry-After backs the whole endpoint off: its row says
// BACKOFF (429 narrow) and nothing said until when. The detail gave each
// method's back-off its end, never the endpoint's (seen live: an http429
// fault with retry_after 20s, backoff_until in the status, no time on
// screen).
func TestView_DetailSaysUntilWhenTheWholeEndpointBacksOff(t *testing.T) {
	s := healthySnapshot()
	ep := &s.Endpoints[1]
	ep.Routable, ep.BackoffUntil = false, t0.Add(20*time.Second)
	m := fixedModel(s, themes.Default(), 80, 24)
	m.epCursor = 1
	d := strings.Join(strings.Fields(strings.Join(m.detailLines(76), " ")), " ")
	if !strings.Contains(d, "429 back-off: the whole endpoint, no new traffic until 12:00:20 (20s left)") {
		t.Errorf("infura's detail does not say when its back-off ends:\n%s", d)
	}
	m.epCursor = 0
	if d = strings.Join(m.detailLines(76), " "); strings.Contains(d, "whole endpoint") {
		t.Errorf("alchemy does not back off:\n%s", d)
	}
}
