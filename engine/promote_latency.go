package engine

import (
	"fmt"
	"sort"
	"time"
)

// The promotion gate's latency check. The seed's cutover shifts a small
// share of traffic and watches "error rate and latency" before promoting;
// the gate weighed the error rate only, and a canary five times slower than
// the primary was promoted on a clean error rate (seeds audit G5).
//
// An endpoint is surely slower when its median is above the p95 of every
// other primary (and tailSlack more): half of its answers take longer than
// nineteen in twenty of any endpoint already in front of clients. That is
// scale-free, needs no setting, and leaves alone what is merely a bit
// slower (another region, a busier node: the router weighs that). It is
// judged per method, on like for like:
//
//   - its attempts' latency over the stats window (a canary's share of
//     first attempts, a primary's or standby's own), method by method
//     against each other primary's of the same method, where both have at
//     least minJudged attempts (answers, and attempts cut short, whose
//     censoring makes a median a lower bound: a slow canary whose
//     attempts lose to hedges is counted by them). A primary whose p95
//     censoring leaves a lower bound gives no bar: the method is unjudged.
//   - its answers to mirrored reads, as a shadow, against the answering
//     attempts' for the same requests, once minJudged are in the window.
//
// The method judged is the one where it is slowest against its bar.

// methodPace is one (endpoint, method)'s latency as the gate reads it.
type methodPace struct {
	n        int64 // attempts weighed: answers and censored ones
	p50, p95 time.Duration
	p95Open  bool // censoring leaves p95 a lower bound
}

func gatePace(l LatencyStats) methodPace {
	return methodPace{n: l.Count + l.Censored, p50: l.P50, p95: l.P95, p95Open: l.LowerBound(PctP95)}
}

// primaryPace is another primary's latency per method.
type primaryPace struct {
	name    string
	methods map[string]methodPace
}

// latencyFigures is the latency evidence a promotion is judged on.
type latencyFigures struct {
	own       map[string]methodPace
	primaries []primaryPace
	// The shadow's answers to mirrors and the answering attempts' for the
	// same requests, over the stats window.
	mirrored                    int64
	mirrorP50, mirrorPrimaryP95 time.Duration
}

// LatencyCheck is whether the endpoint is surely slower than the other
// primaries.
type LatencyCheck struct {
	Verdict string `json:"verdict"`
	// Source: "attempts" (its own on a method, against the primaries') or
	// "mirrors" (its answers to mirrored reads against the client's
	// answering attempts); "" when unjudged.
	Source   string  `json:"source"`
	Method   string  `json:"method"` // the method judged ("" for mirrors)
	Attempts int64   `json:"attempts"`
	P50MS    float64 `json:"p50_ms"`
	// Primary is the primary whose p95 is the bar (the slowest of them on
	// the method; "" for mirrors), over PrimaryAttempts.
	Primary         string  `json:"primary"`
	PrimaryAttempts int64   `json:"primary_attempts"`
	PrimaryP95MS    float64 `json:"primary_p95_ms"`
	MinAttempts     int64   `json:"min_attempts"`
}

// latencyBar is what a median must pass to be surely slower than p95.
func latencyBar(p95 time.Duration) time.Duration { return p95 + tailSlack }

// judgeLatency judges f; primaries says whether any other primary exists.
func judgeLatency(f latencyFigures, primaries int) LatencyCheck {
	c := LatencyCheck{Verdict: verdictNone, MinAttempts: minJudged}
	if primaries == 0 && f.mirrored == 0 {
		return c
	}
	c.Verdict = verdictUnjudged
	worst := -1.0
	take := func(k LatencyCheck, p50, p95 time.Duration) {
		if r := float64(p50) / float64(latencyBar(p95)); r > worst {
			worst, k.MinAttempts = r, minJudged
			k.Verdict = verdictPass
			if p50 > latencyBar(p95) {
				k.Verdict = verdictFail
			}
			c = k
		}
	}
	methods := make([]string, 0, len(f.own))
	for m := range f.own {
		methods = append(methods, m)
	}
	sort.Strings(methods) // ties judged the same way every time
	for _, m := range methods {
		own := f.own[m]
		if own.n < minJudged {
			continue
		}
		bar, barOf, ok := f.barOf(m)
		if !ok {
			continue
		}
		take(LatencyCheck{Source: "attempts", Method: m, Attempts: own.n, P50MS: ms(own.p50),
			Primary: barOf, PrimaryAttempts: bar.n, PrimaryP95MS: ms(bar.p95)}, own.p50, bar.p95)
	}
	if f.mirrored >= minJudged {
		take(LatencyCheck{Source: "mirrors", Attempts: f.mirrored, P50MS: ms(f.mirrorP50),
			PrimaryAttempts: f.mirrored, PrimaryP95MS: ms(f.mirrorPrimaryP95)}, f.mirrorP50, f.mirrorPrimaryP95)
	}
	return c
}

// barOf is the slowest p95 of method m among the other primaries with
// at least minJudged attempts of it, and whose it is; false when none has,
// or when censoring leaves one's p95 a lower bound (no bar to pass).
func (f latencyFigures) barOf(m string) (methodPace, string, bool) {
	var bar methodPace
	var name string
	for _, p := range f.primaries {
		pp, ok := p.methods[m]
		switch {
		case !ok || pp.n < minJudged:
			continue
		case pp.p95Open:
			return methodPace{}, "", false
		case name == "" || pp.p95 > bar.p95:
			bar, name = pp, p.name
		}
	}
	return bar, name, name != ""
}

func (c LatencyCheck) judged() bool { return c.Verdict == verdictPass || c.Verdict == verdictFail }

// text: "eth_getBalance p50 250 ms over 40 attempts against alpha's p95
// 56 ms over 900" or "p50 250 ms over 40 mirrored reads against the
// answering attempts' p95 56 ms for the same requests".
func (c LatencyCheck) text() string {
	if c.Source == "mirrors" {
		return fmt.Sprintf("latency on mirrored reads p50 %s over %d against the answering attempts' p95 %s for the same requests",
			shownMS(c.P50MS), c.Attempts, shownMS(c.PrimaryP95MS))
	}
	return fmt.Sprintf("latency of %s p50 %s over %d attempts against %s's p95 %s over %d (the slowest primary's)",
		c.Method, shownMS(c.P50MS), c.Attempts, c.Primary, shownMS(c.PrimaryP95MS), c.PrimaryAttempts)
}

func (c LatencyCheck) failedText() string {
	return c.text() + fmt.Sprintf(", surely slower (its median above that p95 and %s more)", tailSlack)
}

// evidenceText is the check in a promotion's evidence.
func (c LatencyCheck) evidenceText() string {
	switch c.Verdict {
	case verdictPass:
		return c.text() + ", not surely slower"
	case verdictFail:
		return c.failedText()
	case verdictUnjudged:
		return fmt.Sprintf("latency unjudged: fewer than %d attempts of a method on a side, or mirrored reads answered", c.MinAttempts)
	}
	return "latency unjudged: no other primary to compare with"
}

// shownMS is a figure in milliseconds as messages show durations
// (roundShown): "101ms", "3.42ms".
func shownMS(v float64) string { return roundShown(fromMS(v)).String() }

// mirrorsOf takes a shadow's latency on mirrors (nil: never mirrored to).
func (f *latencyFigures) mirrorsOf(sh *ShadowSnapshot) {
	if sh != nil {
		f.mirrored, f.mirrorP50, f.mirrorPrimaryP95 = sh.Answered, sh.P50, sh.PrimaryP95
	}
}

// snapshotPaces is an endpoint's latency per method from its Snapshot.
func snapshotPaces(methods map[string]MethodSnapshot) map[string]methodPace {
	out := make(map[string]methodPace, len(methods))
	for m, st := range methods {
		out[m] = gatePace(st.Latency)
	}
	return out
}

// paceByMethod is ep's latency per method, as its Snapshot gives it.
func paceByMethod(ep *endpoint) map[string]methodPace {
	methods := ep.methods.all()
	out := make(map[string]methodPace, len(methods))
	for m, st := range methods {
		out[m] = gatePace(latencyStats(st.latency, ep.late.latencies(st)))
	}
	return out
}
