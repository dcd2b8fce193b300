package engine

import (
	"sync"
	"time"
)

// SeriesLength is how many one-second points an endpoint's RTT series
// holds: the last minute.
const SeriesLength = 60

// SeriesPoint is one second of an endpoint's traffic (client attempts,
// upstream batches and probes alike, as the endpoint saw them: a batch is
// one request of one round trip).
type SeriesPoint struct {
	Start    time.Time     // the second this point covers, [Start, Start+1s)
	Requests int64         // attempts that ended in this second
	Failures int64         // of which failed (errors, timeouts, 429s)
	Answers  int64         // of which answered; the RTT figures are theirs
	MeanRTT  time.Duration // 0 when nothing answered
	MaxRTT   time.Duration
}

// rttSeries keeps per-second sums for the last SeriesLength seconds in a
// ring indexed by unix second. It lives in the engine, not the console, so
// that a frozen or attached console and a golden test read the same minute.
type rttSeries struct {
	mu    sync.Mutex
	slots [SeriesLength + 1]seriesSlot // +1: the second being written
}

type seriesSlot struct {
	sec                         int64 // unix second the slot holds; 0 = empty
	requests, failures, answers int64
	sumRTT, maxRTT              time.Duration
}

func (s *rttSeries) slot(sec int64) *seriesSlot {
	sl := &s.slots[sec%int64(len(s.slots))]
	if sl.sec != sec {
		*sl = seriesSlot{sec: sec}
	}
	return sl
}

// answered counts an attempt that got an answer after rtt, ending at end.
func (s *rttSeries) answered(end time.Time, rtt time.Duration) {
	s.mu.Lock()
	sl := s.slot(end.Unix())
	sl.requests++
	sl.answers++
	sl.sumRTT += rtt
	sl.maxRTT = max(sl.maxRTT, rtt)
	s.mu.Unlock()
}

// failed counts an attempt that failed at end.
func (s *rttSeries) failed(end time.Time) {
	s.mu.Lock()
	sl := s.slot(end.Unix())
	sl.requests++
	sl.failures++
	s.mu.Unlock()
}

// ended counts an attempt that ended with neither an answer nor a failure
// (cancelled because another won, or the client left).
func (s *rttSeries) ended(end time.Time) {
	s.mu.Lock()
	s.slot(end.Unix()).requests++
	s.mu.Unlock()
}

// points returns the SeriesLength complete seconds before now's, oldest
// first; seconds without traffic are zero points with their Start set. The
// second still running is left out so that a point never changes once
// shown.
func (s *rttSeries) points(now time.Time, out []SeriesPoint) []SeriesPoint {
	cur := now.Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	for sec := cur - SeriesLength; sec < cur; sec++ {
		p := SeriesPoint{Start: time.Unix(sec, 0).UTC()}
		if sl := &s.slots[sec%int64(len(s.slots))]; sl.sec == sec {
			p.Requests, p.Failures, p.Answers, p.MaxRTT = sl.requests, sl.failures, sl.answers, sl.maxRTT
			if sl.answers > 0 {
				p.MeanRTT = sl.sumRTT / time.Duration(sl.answers)
			}
		}
		out = append(out, p)
	}
	return out
}
