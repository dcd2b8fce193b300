package engine

import (
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// An endpoint's latest answers, which method, when each attempt started
// and how long it took: the pool-slowdown rule's proof that the pool as a
// whole is not slow. An endpoint that answered the same method, at its
// usual pace, after an overdue attempt was sent (a request sent after it,
// or in flight then) shows that the moment was not slow for everyone; the
// overdue endpoint, if it has said nothing since, is hung (poolSlow).
// Another method's answer proves nothing: a heavy call slow everywhere
// leaves the quick ones quick.

// answerLogSize answers are kept: enough that one slow answer of a busy
// machine's among them does not hide the others.
const answerLogSize = 8

type answerLog struct {
	mu     sync.Mutex
	next   int
	logged [answerLogSize]loggedAnswer
}

type loggedAnswer struct {
	method string
	start  int64 // unix nanos
	took   time.Duration
}

func (l *answerLog) add(method string, start time.Time, took time.Duration) {
	l.mu.Lock()
	l.logged[l.next] = loggedAnswer{method, start.UnixNano(), took}
	l.next = (l.next + 1) % answerLogSize
	l.mu.Unlock()
}

// answeredAtPace says whether ep answered a request of method sent at
// since or later within its usual pace for it: not in its tail
// (tailAnswered × its median, at least tailSlack past it; see tail.go). A
// slowdown of the whole pool slows every endpoint past that; a hang of
// some endpoints does not slow the others.
func (ep *endpoint) answeredAtPace(method string, since time.Time) bool {
	s := since.UnixNano()
	return ep.answeredAtPaceIf(method, func(a loggedAnswer) bool { return a.start >= s })
}

// answeredAtPaceAcross says whether ep answered a request of method within
// its usual pace, the answer coming after at: a request sent after at, or
// in flight then. Probes go to every endpoint in the same round, each a
// moment apart: the answer to another endpoint's probe sent a millisecond
// before a hung one's was no proof under answeredAtPace, and the hung
// probe's deadline was "2 of 3 endpoints slow at once" beside a third
// endpoint answering at its pace (poolSlow).
func (ep *endpoint) answeredAtPaceAcross(method string, at time.Time) bool {
	t := at.UnixNano()
	return ep.answeredAtPaceIf(method, func(a loggedAnswer) bool { return a.start+int64(a.took) >= t })
}

func (ep *endpoint) answeredAtPaceIf(method string, counts func(loggedAnswer) bool) bool {
	return ep.answeredIf(method, func(a loggedAnswer, pace time.Duration) bool { return a.took <= pace && counts(a) })
}

// answeredLateAcross says whether ep answered a request past its usual
// pace for the request's method and in no less than took, the answer
// coming after at (as answeredAtPaceAcross counts): slow at that moment by
// took's measure, though within its own deadline. Any method counts, each
// judged by its own pace: a method a few reads in ten ask had no answer
// of its own elsewhere within the deadline, and its endpoint, 3 s slower
// with the whole pool, was charged alone while the others answered every
// other method 3 s late (1 run in 6 of the shipped config).
func (ep *endpoint) answeredLateAcross(at time.Time, took time.Duration) bool {
	t := at.UnixNano()
	ep.answers.mu.Lock()
	logged := ep.answers.logged
	ep.answers.mu.Unlock()
	for _, a := range logged {
		if a.method == "" || a.took < took || a.start+int64(a.took) < t {
			continue
		}
		if pace, ok := ep.paceFor(a.method); ok && a.took > pace {
			return true
		}
	}
	return false
}

// answeredIf says whether one of ep's logged answers of method counts,
// judged against its usual pace for the method; false before it has
// answered enough to have one.
func (ep *endpoint) answeredIf(method string, counts func(a loggedAnswer, pace time.Duration) bool) bool {
	pace, ok := ep.paceFor(method)
	if !ok || method == "" {
		return false
	}
	ep.answers.mu.Lock()
	defer ep.answers.mu.Unlock()
	for _, a := range ep.answers.logged {
		if a.method == method && counts(a, pace) {
			return true
		}
	}
	return false
}

// paceFor is ep's pace for method: its method's answers once they are
// enough to say, else all of its answers.
func (ep *endpoint) paceFor(method string) (time.Duration, bool) {
	w := ep.latency
	if st, ok := ep.methods.lookup(method); ok && st.latency.Count() >= minRouteSamples {
		w = st.latency
	}
	return paceOf(w)
}

// pace is how long an answer of ep's may take and still be at its usual
// pace; false before it has answered enough to say.
func (ep *endpoint) pace() (time.Duration, bool) { return paceOf(ep.latency) }

func paceOf(w *window.Latency) (time.Duration, bool) {
	n, median, _ := w.QuantilePair(0.5, 0.9)
	if n < minRouteSamples {
		return 0, false
	}
	return pastTail(median, tailAnswered), true
}

// unanswering says whether ep is not answering as far as can be told at
// now: suspect (its latest attempt got no answer), or with work in flight
// and nothing said for longer than its pace, before any of it passed a
// deadline.
func (ep *endpoint) unanswering(now time.Time) bool {
	if ep.suspect.Load() {
		return true
	}
	quiet := ep.silentFor(now)
	if quiet == 0 {
		return false
	}
	pace, ok := ep.pace()
	return ok && quiet > pace
}
