package engine

import "time"

// A pool slowdown is endpoints slow at the same moment. An endpoint hung
// since long before an attempt was sent is not slow "at once" with it, nor
// is one whose deadline passed while it answers the method at its usual
// pace: the shipped config's heavy-tail endpoint passes its short learnt
// deadlines now and then, and beside a hung endpoint the two were "2 of 3
// endpoints slow at once (steady, tail)": the hang went uncharged for 1.7 s
// (23 deadlines excused), and a breaker the hang had opened closed again
// (forgive) 166 ms later, to open again 25 ms after.

// answeringSince is an endpoint other than skip (and than a's) that
// answered a request of a's method sent at a's start or later at its usual
// pace, whether or not one of its own attempts passed its deadline
// meanwhile (a tail): proof that the moment a was sent was not slow for
// everyone. A slowdown of the whole pool slows every request sent in it;
// nil when there is none. One slow at a's start itself proves nothing
// (slowthrough.go).
func (e *Engine) answeringSince(a *attempt, skip *endpoint) *endpoint {
	for _, ep := range e.endpoints {
		if ep == skip || ep == a.ep || ep.refusing.Load() || !ep.answersClients() || ep.slowAt(a.start) {
			continue
		}
		if ep.answeredAtPace(a.method(), a.start) {
			return ep
		}
	}
	return nil
}

// hungBefore says whether ep, another endpoint than a's, has said nothing
// since before a's deadline span ahead of a's start, while another endpoint
// answered at its pace a request of a's method sent since a started: its
// silence began before a's moment and outlasts it, a hang and not the
// moment's slowness. An endpoint gone quiet within the span (its answers
// held back by the same slowdown as a's, to answer later) is slow at once
// with a, and its charges are taken back when a reveals the slowdown.
func (e *Engine) hungBefore(ep *endpoint, a *attempt) bool {
	if ep == a.ep || ep.heardAt.Load() >= a.start.Add(-a.deadline).UnixNano() {
		return false
	}
	return e.answeringSince(a, ep) != nil || a.ep.answeredAtPace(a.method(), a.start)
}

// heardSince says whether ep has said anything since t.
func (ep *endpoint) heardSince(t time.Time) bool { return ep.heardAt.Load() >= t.UnixNano() }

// A pool slowed as a whole still answers: late, but it answers. An
// endpoint that says nothing at all beside it is hung, not slow with it.
// With a hung and b and c 2 s slower, every one of a's deadlines was "3 of
// 3 endpoints slow at once (a, b, c)", the charges that opened a's breaker
// were taken back, and a stayed closed, hung, for 22 to 41 s: writes sent
// to it waited out the 10 s request deadline where b and c answered them in
// 2 s. (An answer at its pace elsewhere proves a hang sooner: answeringSince.)

// outlastMinSilence is the least silence outlasted judges: a slowdown of
// the whole pool of 300 ms that ended a moment after an attempt was sent
// had the others answer at once while its endpoint was still slow with
// it (1 run in 32 of the pool tests, four at once on 2 cores, with the
// second-half rule below). A hang beside a slowed pool is silent for
// seconds.
const outlastMinSilence = time.Second

// outlasted is another endpoint than ep that, while ep has said nothing
// since since, answered a request (of method, any when method is "") sent
// in the second half of ep's silence so far at now, and the time that
// answer took; nil when none did. ep, with work in flight, is then slower
// than the pool by more than twice: whatever slows the others does not
// explain it. Only requests sent in the second half count: at the onset of
// a slowdown of the whole pool, a request sent a moment after ep's attempt
// to an endpoint not yet slowed answered at once, and ep, slowed a moment
// before it, was charged as hung (3 runs in 16 of the pool tests, four at
// once on 2 cores).
func (e *Engine) outlasted(ep *endpoint, since, now time.Time, method string) (*endpoint, time.Duration) {
	if ep.heardSince(since) || now.Sub(since) < outlastMinSilence {
		return nil, 0
	}
	half := now.Sub(since) / 2
	s := since.Add(half).UnixNano()
	for _, other := range e.endpoints {
		if other == ep || other.refusing.Load() || !other.answersClients() {
			continue
		}
		if took, ok := other.answers.answeredWithin(method, s, half); ok {
			return other, took
		}
	}
	return nil, 0
}

// answeredWithin says whether the log holds an answer (of method, any when
// method is "") to a request sent at sentFrom or later that took at most
// limit, and the time it took.
func (l *answerLog) answeredWithin(method string, sentFrom int64, limit time.Duration) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.logged {
		if a.method != "" && (method == "" || a.method == method) && a.start >= sentFrom && a.took <= limit {
			return a.took, true
		}
	}
	return 0, false
}

// noteHangSent notes, for an attempt sent at start and charged a hang, when
// its endpoint's present silence was first charged: each read that meets a
// hang is cut once another endpoint answers it, and the silence that shows
// the hang is the endpoint's, across them.
func (ep *endpoint) noteHangSent(start time.Time) {
	s := start.UnixNano()
	if prev := ep.hangSent.Load(); prev == 0 || ep.heardAt.Load() >= prev || s < prev {
		ep.hangSent.Store(s)
	}
}

// silentSince is when ep's silence, as a's deadline finds it, began to
// count: a's start, or the start of the first attempt charged a hang in
// the same silence.
func (ep *endpoint) silentSince(a *attempt) time.Time {
	since := a.start
	if hs := ep.hangSent.Load(); hs != 0 && hs < since.UnixNano() && ep.heardAt.Load() < hs {
		since = time.Unix(0, hs)
	}
	return since
}

// outlastedSinceHang is outlasted for ep's silence since its first attempt
// charged a hang in it was sent (an idle endpoint's silence before that
// says nothing).
func (e *Engine) outlastedSinceHang(ep *endpoint, now time.Time) bool {
	sent := ep.hangSent.Load()
	if sent == 0 {
		return false
	}
	other, _ := e.outlasted(ep, time.Unix(0, sent), now, "")
	return other != nil
}

// outlastedNow says whether a's endpoint, silent since a was sent, is
// outlasted by another endpoint's answer to a's method at now.
func (e *Engine) outlastedNow(a *attempt, now time.Time) bool {
	other, _ := e.outlasted(a.ep, a.ep.silentSince(a), now, a.method())
	return other != nil
}
