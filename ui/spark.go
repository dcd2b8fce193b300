package ui

import (
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/sparkline"

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

// highest is the highest second on screen.
func (s *spark) highest() float64 {
	top := 0.0
	for _, v := range s.vals[max(0, len(s.vals)-s.model.Width()):] {
		top = max(top, v)
	}
	return top
}

// drawShared draws every sparkline to one scale, the highest second on
// any of them (a spike scrolls out with its minute), so that rows compare:
// each scaled to its own highest, an endpoint at 42 ms and one at 290 ms
// under a latency fault drew the same full cells (console audit, stop 56).
func drawShared(sparks map[string]*spark, st styles) {
	top := 1.0
	for _, sp := range sparks {
		top = max(top, sp.highest())
	}
	for _, sp := range sparks {
		if sp.stale || sp.top != top {
			sp.draw(st, top)
		}
	}
}

// draw scales to top and overlays the failure marks.
func (s *spark) draw(st styles, top float64) {
	w := s.model.Width()
	from := max(0, len(s.vals)-w)
	s.top, s.stale = top, false
	s.model.SetMax(top)
	s.model.Draw()
	x0 := w - (len(s.vals) - from)
	for i := from; i < len(s.vals); i++ {
		p := canvas.Point{X: x0 + i - from, Y: 0}
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
