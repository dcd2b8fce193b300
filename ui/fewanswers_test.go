package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/rpcdash/rpcdash/themes"
)

// An endpoint's P50 and P95 from fewer than 5 answers (the router's
// measure) are faint: after a slowdown's answers were forgotten they
// rested on one or two under "over the last 5m".
func TestView_LatencyFromFewAnswersIsFaint(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	s := healthySnapshot()
	s.Endpoints[0].Latency.Count = 2
	m := fixedModel(s, themes.Default(), 120, 36)
	got := m.View()
	p50 := boundMS(s.Endpoints[0].Latency.P50, false)
	if line := lineWith(got, s.Endpoints[0].Name+" "); !strings.Contains(line, m.styles.faint.Render(p50)) {
		t.Errorf("%s, 2 answers: P50 %q not faint: %q", s.Endpoints[0].Name, p50, line)
	}
	p50 = boundMS(s.Endpoints[1].Latency.P50, false)
	if line := lineWith(got, s.Endpoints[1].Name+" "); strings.Contains(line, m.styles.faint.Render(p50)) {
		t.Errorf("%s, %d answers: P50 faint: %q", s.Endpoints[1].Name, s.Endpoints[1].Latency.Count, line)
	}
}
