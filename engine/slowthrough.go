package engine

import (
	"sync"
	"time"
)

// An answer at an endpoint's usual pace to a request sent after an overdue
// attempt is proof that the attempt's moment was not slow for everyone
// (answeringSince), unless that endpoint was slow at the moment too and
// the answer only shows the moment over. A slowdown of the whole pool of
// 325 ms that ended 170 ms after an attempt was sent had one endpoint
// answer a fresh read at its pace while the attempts the others sent in
// the slowdown were still on their way: taken for proof, they were "hung",
// and three such charges opened a breaker (1 run in 16 of the pool tests,
// four at once on 2 cores; in fresh-clone CI too).
//
// An endpoint was slow at a moment when what it had in flight then came
// back late, or not within its deadline, and none of it at its pace. One
// with a heavy tail has its tail in flight now and then, beside reads it
// answers at its pace: it stays proof of a hang beside it.

// overdueLogSize attempts past their deadline are kept, as answerLogSize
// answers are.
const overdueLogSize = answerLogSize

// overdueLog: an endpoint's latest attempts that passed their deadline,
// when each was sent and when its deadline passed (unix nanos).
type overdueLog struct {
	mu     sync.Mutex
	next   int
	logged [overdueLogSize]struct{ start, passed int64 }
}

func (l *overdueLog) add(start, passed time.Time) {
	l.mu.Lock()
	l.logged[l.next].start, l.logged[l.next].passed = start.UnixNano(), passed.UnixNano()
	l.next = (l.next + 1) % overdueLogSize
	l.mu.Unlock()
}

// slowAt says whether ep was slow at at: of its logged answers and
// attempts past their deadline, those in flight at at (sent then or
// before, answered or overdue after) include one past its pace (each
// method by its own) or its deadline, and none at its pace.
func (ep *endpoint) slowAt(at time.Time) bool {
	t := at.UnixNano()
	late := false
	ep.overdue.mu.Lock()
	for _, o := range ep.overdue.logged {
		if o.start != 0 && o.start <= t && o.passed >= t {
			late = true
		}
	}
	ep.overdue.mu.Unlock()
	ep.answers.mu.Lock()
	logged := ep.answers.logged
	ep.answers.mu.Unlock()
	for _, a := range logged {
		if a.method == "" || a.start > t || a.start+int64(a.took) < t {
			continue
		}
		pace, ok := ep.paceFor(a.method)
		if !ok {
			continue
		}
		if a.took <= pace {
			return false
		}
		late = true
	}
	return late
}
