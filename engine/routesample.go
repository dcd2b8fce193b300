package engine

import (
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// The routing cost of an endpoint is taken from the attempts the router
// chose it for: primaries (probes and trials among them) and exploring
// hedges, sent whatever the other endpoints were doing. A hedge or a
// failover is sent because another endpoint was slow or failed, and when
// endpoints are slow together (a heavy block, a shared provider) that is
// when it is slow too: its answers are a sample of the bad moments. Once
// one endpoint took most primaries, the others' windows held mostly such
// samples, read as a tail share of 8 to 26 times the leader's, and kept
// the reads on the leader after it slowed: with a +400 ms fault on it,
// clients' p50 stayed at 490 ms over 400 reads beside two endpoints at
// 90 ms (three alike sims with shared incidents, stop 57). The display,
// the deadlines and the forecast keep every answer (endpoint.latency).

// routeSample says whether a's latency is a routing sample.
func (a *attempt) routeSample() bool { return a.role == rolePrimary || a.explore }

// recordAnswerLatency enters an answer's latency in the windows of ep and
// its method, and in their routing windows when it is a routing sample.
func (ep *endpoint) recordAnswerLatency(ms *methodStats, took time.Duration, route bool) {
	ms.latency.Record(took)
	ep.latency.Record(took)
	if route {
		ms.route.Record(took)
		ep.route.Record(took)
	}
}

// routePace is the endpoint's usual pace for a method as the router
// weighs it, from its routing samples (usualPace's rule: the method's
// window once it holds fullSamples, else the endpoint's; the median,
// blended with the p90 once full), with the window it read and their last
// answers.
func (ep *endpoint) routePace(ms *methodStats) (time.Duration, string, *window.Latency, *lastAnswers, bool) {
	if ms != nil && ms.route.Count() >= fullSamples {
		return usualFigure(ms.route, scoreFromMethod, &ms.routeLast)
	}
	return usualFigure(ep.route, scoreFromEndpoint, &ep.routeLast)
}
