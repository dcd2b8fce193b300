package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/sparkline"
	"github.com/charmbracelet/lipgloss"

	"github.com/rpcdash/rpcdash/engine"
)

// spark is one endpoint's RTT sparkline: an ntcharts sparkline fed one
// point per second of the engine's series (pushed only in Update, when a
// Snapshot arrives), with seconds that mostly failed drawn as "×" marks
// rather than left as gaps, seconds with some failures in the failure
// colour, and seconds whose attempts were all cut short when another
// endpoint answered first as "·" (traffic, but no answer to time): a blank
// is a second with no traffic.
type spark struct {
	model sparkline.Model
	last  time.Time // Start of the newest second pushed
	vals  []float64 // the pushed seconds, oldest first (at most a minute)
	marks []failMark
	// text is the chart as drawn at top, the scale every endpoint's
	// sparkline shares (drawShared): View reads it, so a redraw costs
	// nothing until the data or the scale changes.
	text  string
	top   float64
	stale bool
}

type failMark uint8

// pastScale is a second too far above the others to share their scale
// (sharedTop).
const pastScale = '▲'

const (
	markNone failMark = iota
	markSome          // some attempts failed
	markMost          // at least as many failed as answered
	markCut           // attempts, every one cut short: no answer, no failure
)

func newSpark(width int, st styles) *spark {
	return &spark{model: sparkline.New(width, 1, sparkline.WithNoAutoMaxValue(), sparkline.WithStyle(st.spark))}
}

// push appends the seconds of series newer than the last one pushed and
// redraws. The first push (or a gap after a freeze) takes the whole minute.
func (s *spark) push(series []engine.SeriesPoint) {
	pushed := false
	for _, p := range series {
		if !p.Start.After(s.last) {
			continue
		}
		s.last = p.Start
		v := float64(p.MeanRTT) / float64(time.Millisecond)
		mark := markNone
		switch {
		case p.Failures > 0 && p.Failures >= p.Answers:
			mark = markMost
		case p.Failures > 0:
			mark = markSome
		case p.Answers == 0 && p.Requests > 0:
			mark = markCut
		}
		s.vals = append(s.vals, v)
		s.marks = append(s.marks, mark)
		s.model.Push(v)
		pushed = true
	}
	if n := len(s.vals) - engine.SeriesLength; n > 0 {
		s.vals, s.marks = s.vals[n:], s.marks[n:]
	}
	if pushed || s.text == "" {
		s.stale = true
	}
}

// resize changes the width, keeping the newest seconds.
func (s *spark) resize(width int) {
	if width == s.model.Width() {
		return
	}
	s.model.Resize(width, 1)
	s.model.Clear()
	from := max(0, len(s.vals)-width)
	s.model.PushAll(s.vals[from:])
	s.stale = true
}

// onScreen is the seconds on screen, oldest first.
func (s *spark) onScreen() []float64 {
	return s.vals[max(0, len(s.vals)-s.model.Width()):]
}

// drawShared draws every sparkline to one scale, so that rows compare:
// each scaled to its own highest, an endpoint at 42 ms and one at 290 ms
// under a latency fault drew the same full cells (console audit, stop 56).
// It returns the scale's top in milliseconds (sharedTop), 0 when no second
// on screen was answered.
func drawShared(sparks map[string]*spark, st styles) float64 {
	var secs []float64
	for _, sp := range sparks {
		secs = append(secs, sp.onScreen()...)
	}
	top := sharedTop(secs)
	for _, sp := range sparks {
		if sp.stale || sp.top != top {
			sp.draw(st, top)
		}
	}
	return top
}

// sharedTop is the top of the sparklines' scale: the highest second on
// screen, unless a few seconds (one in 20 at most, one at least, of ten or
// more) stand more than twice as high as every other: those are drawn past
// the scale (▲) and the highest of the rest is the top. One slow second (a
// tail answer at 20 times the pace) flattened every other second to ▁
// until it scrolled out, in the incidents the console is watched in; a
// whole row slowed by a fault is more than a few seconds and still sets
// the scale.
func sharedTop(secs []float64) float64 {
	var answered []float64
	for _, v := range secs {
		if v > 0 {
			answered = append(answered, v)
		}
	}
	if len(answered) == 0 {
		return 0
	}
	slices.Sort(answered)
	slices.Reverse(answered)
	if len(answered) < 10 {
		return answered[0]
	}
	few := max(1, len(answered)/20)
	for answered[0] > 2*answered[few] {
		answered = answered[1:]
	}
	return answered[0]
}

// draw scales to top, marks the seconds past it and overlays the failure
// marks.
func (s *spark) draw(st styles, top float64) {
	w := s.model.Width()
	from := max(0, len(s.vals)-w)
	s.top, s.stale = top, false
	s.model.SetMax(max(top, 1))
	s.model.Draw()
	x0 := w - (len(s.vals) - from)
	for i := from; i < len(s.vals); i++ {
		p := canvas.Point{X: x0 + i - from, Y: 0}
		if s.vals[i] > top {
			s.model.Canvas.SetRuneWithStyle(p, pastScale, st.spark)
		}
		switch {
		case s.marks[i] == markMost:
			s.model.Canvas.SetRuneWithStyle(p, '×', st.sparkFail)
		case s.marks[i] == markCut:
			s.model.Canvas.SetRuneWithStyle(p, '·', st.spark)
		case s.marks[i] == markSome:
			r := s.model.Canvas.Cell(p).Rune
			if r == 0 || r == ' ' {
				r = '▁'
			}
			s.model.Canvas.SetRuneWithStyle(p, r, st.sparkFail)
		case s.vals[i] > 0 && (s.model.Canvas.Cell(p).Rune == 0 || s.model.Canvas.Cell(p).Rune == ' '):
			// an answered second too small for an eighth of a cell still shows
			s.model.Canvas.SetRuneWithStyle(p, '▁', st.spark)
		}
	}
	s.text = s.model.View()
}

func (s *spark) view() string { return s.text }

// sparkTitle is the sparkline column's title: the seconds it spans and,
// as room allows, what its full cell stands for (the scale's top, in ms),
// which changes as seconds scroll and slow ones are set past it.
func sparkTitle(width int, top float64) string {
	span := fmt.Sprintf("RTT %ds", width)
	if top <= 0 {
		return span
	}
	full := "█" + strings.TrimSpace(fmtMS(time.Duration(top*float64(time.Millisecond))))
	for _, t := range []string{span + " " + full, "RTT " + full} {
		if lipgloss.Width(t) <= width {
			return t
		}
	}
	return span
}
