package engine

import (
	"fmt"
	"math"
	"strings"
)

// The promotion gate: the seed's cutover promotes an endpoint "only after
// the comparison passes", and a canary only while it is healthy. A role
// change that puts an endpoint in front of more clients (exposure rises:
// shadow < standby < canary < primary) is judged on the endpoint's own
// evidence, and refused when that evidence says it fails, unless forced:
//
//   - its shadow comparison (kept across roles): refused when at least
//     minJudged comparisons were judged (match + mismatch + errors; tip
//     outcomes are not counted against it) and match_rate is below
//     router.promote_match_rate;
//   - its error rate over the rates window (ERR%) against the primaries'
//     together: refused when the endpoint's is surely higher, the lower
//     end of its 95 % interval (one failure not counted, as one slow
//     answer is not a tail) above the upper end of theirs (tail.go's
//     rule), both over at least minJudged attempts;
//   - its latency against the other primaries' (promote_latency.go):
//     refused when its median is surely slower than their p95;
//   - its head: refused while it is lag-excluded.
//
// Evidence too thin to judge lets the change through and says so. The
// console judges with the same function on its Snapshot (PromotionOf), so
// it can say before asking that the engine would refuse.

// minJudged is how many comparisons or attempts a promotion is judged on
// at least: the router's own threshold below which a failure rate is not
// weighed (minRateAttempts).
const minJudged = minRateAttempts

// Verdicts of one check of a promotion.
const (
	verdictPass     = "pass"
	verdictFail     = "fail"
	verdictUnjudged = "unjudged" // too few comparisons or attempts
	verdictNone     = "none"     // no evidence of this kind (never mirrored to; no primary to compare with)
)

// roleExposure orders roles by how much client traffic they take.
func roleExposure(role string) int {
	switch role {
	case RoleStandby:
		return 1
	case RoleCanary:
		return 2
	case RolePrimary:
		return 3
	}
	return 0 // shadow: answers no client
}

// isPromotion says whether changing from → to puts the endpoint in front
// of more clients: out of shadow, standby → canary, anything → primary.
func isPromotion(from, to string) bool { return roleExposure(to) > roleExposure(from) }

// promotionFigures is the evidence a promotion is judged on.
type promotionFigures struct {
	Shadow             *ShadowSnapshot // nil: never mirrored to
	Attempts, Failures int64           // the endpoint's, over the rates window; attempts that reached a verdict (RateStats.Verdicts)
	// PrimaryAttempts, PrimaryFailures: the other primaries' together.
	PrimaryAttempts, PrimaryFailures int64
	Primaries                        int     // how many other primaries
	MinMatchRate                     float64 // router.promote_match_rate
	HeadSeen, LagExcluded            bool
	Lag, MaxLag                      int64 // its lag now; chain.max_head_lag
	Chain                            string
	Latency                          latencyFigures
}

// ComparisonCheck is the shadow comparison a promotion rests on.
type ComparisonCheck struct {
	Verdict      string  `json:"verdict"`
	Compared     int64   `json:"compared"`
	Judged       int64   `json:"judged"` // match + mismatch + errors
	Match        int64   `json:"match"`
	Mismatch     int64   `json:"mismatch"`
	Errors       int64   `json:"errors"`
	Tip          int64   `json:"tip"`
	MatchRate    float64 `json:"match_rate"`
	MinMatchRate float64 `json:"min_match_rate"`
	MinCompared  int64   `json:"min_compared"`
}

// ErrorRateCheck is the endpoint's error rate against the primaries'.
type ErrorRateCheck struct {
	Verdict         string  `json:"verdict"`
	Attempts        int64   `json:"attempts"`
	Failures        int64   `json:"failures"`
	Rate            float64 `json:"rate"`
	Low             float64 `json:"rate_low"` // lower end of its 95 % interval, one failure not counted
	PrimaryAttempts int64   `json:"primary_attempts"`
	PrimaryFailures int64   `json:"primary_failures"`
	PrimaryRate     float64 `json:"primary_rate"`
	PrimaryHigh     float64 `json:"primary_rate_high"` // upper end of theirs
	MinAttempts     int64   `json:"min_attempts"`
}

// HeadCheck is whether the endpoint is current: "fail" while it is
// lag-excluded, "pass" once a head of its is seen and it is not, "none"
// before.
type HeadCheck struct {
	Verdict    string `json:"verdict"`
	Lag        int64  `json:"lag"`
	MaxHeadLag int64  `json:"max_head_lag"`
	Unit       string `json:"unit"` // "blocks" or "slots"
}

// Promotion is a promotion's judgement.
type Promotion struct {
	Endpoint   string          `json:"endpoint"`
	From       string          `json:"from"`
	To         string          `json:"to"`
	Judged     bool            `json:"judged"`  // some check had enough evidence
	Refused    bool            `json:"refused"` // some check failed (forced or not)
	Forced     bool            `json:"forced"`  // taken over a failed check with "force": true
	Evidence   string          `json:"evidence"`
	Comparison ComparisonCheck `json:"comparison"`
	ErrorRate  ErrorRateCheck  `json:"error_rate"`
	Latency    LatencyCheck    `json:"latency"`
	Head       HeadCheck       `json:"head"`
}

// judgePromotion judges name's change from → to on f; the zero Promotion
// (and false) when the change is no promotion.
func judgePromotion(name, from, to string, f promotionFigures) (Promotion, bool) {
	if !isPromotion(from, to) {
		return Promotion{}, false
	}
	p := Promotion{Endpoint: name, From: from, To: to}
	c := &p.Comparison
	c.MinMatchRate, c.MinCompared, c.Verdict = f.MinMatchRate, minJudged, verdictNone
	if sh := f.Shadow; sh != nil {
		c.Compared, c.Match, c.Mismatch, c.Errors, c.Tip, c.MatchRate = sh.Compared, sh.Match, sh.Mismatch, sh.Errors, sh.Tip, sh.MatchRate
		c.Judged = sh.Match + sh.Mismatch + sh.Errors
		switch {
		case c.Judged < minJudged: // 0 too: mirrored to, every outcome tip or dropped
			c.Verdict = verdictUnjudged
		case sh.MatchRate < f.MinMatchRate:
			c.Verdict = verdictFail
		default:
			c.Verdict = verdictPass
		}
	}
	r := &p.ErrorRate
	r.MinAttempts, r.Verdict = minJudged, verdictNone
	r.Attempts, r.Failures, r.PrimaryAttempts, r.PrimaryFailures = f.Attempts, f.Failures, f.PrimaryAttempts, f.PrimaryFailures
	r.Rate, r.PrimaryRate = share(f.Failures, f.Attempts), share(f.PrimaryFailures, f.PrimaryAttempts)
	switch {
	case f.Primaries == 0:
	case f.Attempts < minJudged || f.PrimaryAttempts < minJudged:
		r.Verdict = verdictUnjudged
	default:
		if slip := f.Failures - 1; slip > 0 {
			r.Low, _ = tailInterval(float64(slip)/float64(f.Attempts), f.Attempts)
		}
		_, r.PrimaryHigh = tailInterval(r.PrimaryRate, f.PrimaryAttempts)
		r.Verdict = verdictPass
		if r.Low > r.PrimaryHigh {
			r.Verdict = verdictFail
		}
	}
	p.Latency = judgeLatency(f.Latency, f.Primaries)
	h := &p.Head
	h.Verdict, h.Lag, h.MaxHeadLag, h.Unit = verdictNone, f.Lag, f.MaxLag, "blocks"
	if f.Chain == "solana" {
		h.Unit = "slots"
	}
	switch {
	case f.LagExcluded:
		h.Verdict = verdictFail
	case f.HeadSeen:
		h.Verdict = verdictPass
	}
	// Being current is no evidence the endpoint answers right: a head
	// that passes judges nothing, one that fails refuses.
	p.Judged = c.Verdict == verdictPass || c.Verdict == verdictFail || r.Verdict == verdictPass || r.Verdict == verdictFail ||
		p.Latency.judged() || h.Verdict == verdictFail
	p.Refused = c.Verdict == verdictFail || r.Verdict == verdictFail || p.Latency.Verdict == verdictFail || h.Verdict == verdictFail
	p.Evidence = p.evidence()
	return p, true
}

func share(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// rateText shows a match rate at two decimals, cut rather than rounded
// (0.999 is "0.99", never "1.00"), with four when two would hide that it
// is below 1.
func rateText(r float64) string {
	if cut := math.Floor(r*100) / 100; cut == r || r < 0.99 {
		return fmt.Sprintf("%.2f", cut)
	}
	return fmt.Sprintf("%.4f", math.Floor(r*1e4)/1e4)
}

func pct(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }

// text: "match_rate 0.00 over 100 compared (0 mismatch, 100 errors)".
func (c ComparisonCheck) text() string {
	s := fmt.Sprintf("match_rate %s over %d compared (%d mismatch, %d errors", rateText(c.MatchRate), c.Judged, c.Mismatch, c.Errors)
	if c.Tip > 0 {
		s += fmt.Sprintf("; %d tip not counted", c.Tip)
	}
	return s + ")"
}

func (r ErrorRateCheck) text() string {
	return fmt.Sprintf("error rate %s of %d attempts against the primaries' %s of %d", pct(r.Rate), r.Attempts, pct(r.PrimaryRate), r.PrimaryAttempts)
}

// failedText is a failed comparison's figures and what they fall short of.
func (c ComparisonCheck) failedText() string {
	return fmt.Sprintf("%s, below router.promote_match_rate %s", c.text(), rateText(c.MinMatchRate))
}

// failedText is a failed error rate's figures and its interval's bounds.
func (r ErrorRateCheck) failedText() string {
	return fmt.Sprintf("%s, surely higher (95%% bounds %s > %s)", r.text(), pct(r.Low), pct(r.PrimaryHigh))
}

// failedText: "1000 blocks behind the pool head, more than
// chain.max_head_lag 5: stale".
func (h HeadCheck) failedText() string {
	return fmt.Sprintf("%d %s behind the pool head, more than chain.max_head_lag %d: stale", h.Lag, h.Unit, h.MaxHeadLag)
}

// evidence says what the promotion rests on, check by check.
func (p Promotion) evidence() string {
	c, r := p.Comparison, p.ErrorRate
	var parts []string
	switch c.Verdict {
	case verdictPass:
		parts = append(parts, fmt.Sprintf("comparison passed: %s, at least %s needed", c.text(), rateText(c.MinMatchRate)))
	case verdictFail:
		parts = append(parts, "comparison failed: "+c.failedText())
	case verdictUnjudged:
		parts = append(parts, fmt.Sprintf("comparison unjudged: %d compared, fewer than %d (%s)", c.Judged, c.MinCompared, c.text()))
	default:
		parts = append(parts, "no comparison (never mirrored to as a shadow)")
	}
	switch r.Verdict {
	case verdictPass:
		parts = append(parts, r.text()+", not surely higher")
	case verdictFail:
		parts = append(parts, r.failedText())
	case verdictUnjudged:
		parts = append(parts, fmt.Sprintf("error rate unjudged: %s, fewer than %d attempts on a side", r.text(), r.MinAttempts))
	default:
		parts = append(parts, "error rate unjudged: no other primary to compare with")
	}
	parts = append(parts, p.Latency.evidenceText())
	if p.Head.Verdict == verdictFail {
		parts = append(parts, p.Head.failedText())
	}
	s := strings.Join(parts, "; ")
	if !p.Judged {
		s = "unjudged, too little evidence: " + s
	}
	return s
}

// Why is a refused promotion's reason, naming the failed figures:
// `shadow c: match_rate 0.00 over 100 compared (0 mismatch, 100 errors),
// below router.promote_match_rate 1.00; promote with "force": true to
// override`.
func (p Promotion) Why() string {
	return p.Failed() + "; promote with \"force\": true to override"
}

// Failed names the failed checks' figures: "shadow c: match_rate 0.00 over
// 100 compared (0 mismatch, 100 errors), below router.promote_match_rate
// 1.00" ("" when none failed).
func (p Promotion) Failed() string {
	var failed []string
	if c := p.Comparison; c.Verdict == verdictFail {
		failed = append(failed, c.failedText())
	}
	if r := p.ErrorRate; r.Verdict == verdictFail {
		failed = append(failed, r.failedText())
	}
	if l := p.Latency; l.Verdict == verdictFail {
		failed = append(failed, l.failedText())
	}
	if h := p.Head; h.Verdict == verdictFail {
		failed = append(failed, h.failedText())
	}
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s: %s", p.From, p.Endpoint, strings.Join(failed, "; "))
}

// PromotionOf judges, on this Snapshot, making name's role to: what the
// engine would decide now (the console asks before it sends). ok is false
// for an unknown endpoint or a change that is no promotion.
func (s Snapshot) PromotionOf(name, to string) (Promotion, bool) {
	f := promotionFigures{MinMatchRate: s.Settings.PromoteMatchRate, MaxLag: s.MaxLag, Chain: s.Chain}
	var from string
	found := false
	for _, ep := range s.Endpoints {
		if ep.Name == name {
			from, found = ep.Role, true
			f.Shadow, f.Attempts, f.Failures = ep.Shadow, ep.Rates.Verdicts(), ep.Rates.Failures
			f.HeadSeen, f.LagExcluded, f.Lag = ep.Head > 0, ep.LagExcluded, ep.Lag
			f.Latency.own = snapshotPaces(ep.Methods)
			f.Latency.mirrorsOf(ep.Shadow)
			continue
		}
		if ep.Role == RolePrimary {
			f.Primaries++
			f.PrimaryAttempts += ep.Rates.Verdicts()
			f.PrimaryFailures += ep.Rates.Failures
			f.Latency.primaries = append(f.Latency.primaries, primaryPace{name: ep.Name, methods: snapshotPaces(ep.Methods)})
		}
	}
	if !found {
		return Promotion{}, false
	}
	return judgePromotion(name, from, to, f)
}

// figuresOf is ep's evidence now (the engine's own judgement).
func (e *Engine) figuresOf(ep *endpoint) promotionFigures {
	f := promotionFigures{MinMatchRate: e.cfg.Router.PromoteMatchRate, MaxLag: e.cfg.Chain.MaxHeadLag, Chain: e.cfg.Chain.Kind}
	f.HeadSeen, f.LagExcluded, f.Lag = ep.head.Load() > 0, ep.lagExcluded.Load(), e.lagOf(ep)
	if sh := ep.shadow.snapshot(); sh.Mirrored > 0 || sh.Compared > 0 {
		f.Shadow = sh
	}
	f.Latency.mirrorsOf(f.Shadow)
	t := ep.rates.Totals()
	f.Attempts, f.Failures = t.Verdicts(), t.Failure
	f.Latency.own = paceByMethod(ep)
	for _, o := range e.endpoints {
		if o == ep || o.role() != RolePrimary {
			continue
		}
		t := o.rates.Totals()
		f.Primaries++
		f.PrimaryAttempts += t.Verdicts()
		f.PrimaryFailures += t.Failure
		f.Latency.primaries = append(f.Latency.primaries, primaryPace{name: o.Name, methods: paceByMethod(o)})
	}
	return f
}

// promotionRefusedError is a promotion refused because the endpoint's own
// evidence says it fails (SetRole; the admin API's 409 with "promotion",
// which AdminClient turns back into one).
type promotionRefusedError struct{ Promotion Promotion }

func (e *promotionRefusedError) Error() string { return e.Promotion.Why() }

// eventText is what an accepted promotion's event says it rests on.
func (p Promotion) eventText() string {
	if p.Forced {
		return "promoted with force over a failed check: " + p.Evidence
	}
	return "promoted on: " + p.Evidence
}
