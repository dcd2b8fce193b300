package ui

import (
	"strings"
	"testing"
	"time"

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

// An endpoint that answered nothing over the last minute while attempts to
// it failed (a hang: client attempts and probes alike) shows the P50 and
// P95 of its answers before it went silent: they are faint, and its detail
// says so. A hung endpoint, open two minutes, read P50 59ms P95 97ms.
func TestView_ASilentEndpointsLatencyIsFaintAndTheDetailSaysWhy(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	s := healthySnapshot()
	hung := &s.Endpoints[0]
	for i := range hung.Series {
		p := &hung.Series[i]
		p.Requests, p.Answers, p.MeanRTT, p.MaxRTT, p.Failures = 0, 0, 0, 0, 0
		if i%5 == 0 {
			p.Requests, p.Failures = 1, 1 // a probe every 5 s, unanswered
		}
	}
	m := fixedModel(s, themes.Default(), 120, 36)
	got := m.View()
	for i, ep := range s.Endpoints[:2] {
		line := lineWith(got, ep.Name+" ")
		for _, v := range []time.Duration{ep.Latency.P50, ep.Latency.P95} {
			cell := boundMS(v, false)
			if faint := strings.Contains(line, m.styles.faint.Render(cell)); faint != (i == 0) {
				t.Errorf("%s: latency %q faint %v, want %v: %q", ep.Name, cell, faint, i == 0, line)
			}
		}
	}
	want := "; none in the last 1m (12 attempts failed): these are of its answers before"
	var seen bool
	for _, l := range m.detailLines(400) {
		if strings.Contains(l, "latency p50") {
			seen = true
			if !strings.HasSuffix(strings.TrimSpace(l), want) {
				t.Errorf("detail of %s: %q, want it to end %q", hung.Name, strings.TrimSpace(l), want)
			}
		}
	}
	if !seen {
		t.Errorf("detail of %s has no latency line", hung.Name)
	}
	m.epCursor = 1
	for _, l := range m.detailLines(400) {
		if strings.Contains(l, "none in the last") {
			t.Errorf("detail of %s, answering: %q", s.Endpoints[1].Name, l)
		}
	}
}
