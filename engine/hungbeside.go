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
// nil when there is none.
func (e *Engine) answeringSince(a *attempt, skip *endpoint) *endpoint {
	for _, ep := range e.endpoints {
		if ep == skip || ep == a.ep || ep.refusing.Load() || !ep.answersClients() {
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
