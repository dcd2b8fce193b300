package engine_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

type timedReply struct {
	sent time.Time
	r    reply
}

// openLoop sends one read every interval for dur (bounded), each on its own
// goroutine so a slow answer never delays the next send.
func openLoop(h *harness, interval, dur time.Duration, at func(elapsed time.Duration)) []timedReply {
	var mu sync.Mutex
	var out []timedReply
	var wg sync.WaitGroup
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; time.Since(start) < dur; i++ {
		<-tick.C
		if at != nil {
			at(time.Since(start))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent := time.Now()
			r := h.call(i, "eth_getBalance", addr, "latest")
			mu.Lock()
			out = append(out, timedReply{sent, r})
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func TestHang_EndpointThatNeverAnswersIsOutWithinTwoSeconds(t *testing.T) {
	t.Parallel()
	for _, hedging := range []bool{false, true} {
		name := "hedging-off"
		dur := 20 * time.Second
		if hedging {
			name, dur = "hedging-on", 8*time.Second
		}
		t.Run(name, func(t *testing.T) {
			untilJudged(t, func(int) string {
				if why := hangOutWithin(t, hedging, dur); why != "" {
					return "too loaded for 50 ms endpoints: " + why
				}
				return ""
			})
		})
	}
}

// hangOutWithin runs the hang test once. It says why it could not judge
// (and judged nothing) when the engine measured the endpoints too slow for
// its premise: an attempt deadline raced at half the request's ("half"),
// whose hang is charged only at the endpoint's own deadline, which the
// Snapshot does not show (up to 4.75 s under a 5 s request deadline: a
// loaded machine's breaker opened +5.3 s after the fault, by the rule,
// beside a bound of +3.5 s drawn from the 2.5 s shown).
func hangOutWithin(t *testing.T, hedging bool, dur time.Duration) string {
	normal := sim.Latency{Median: 50 * time.Millisecond, Sigma: 0.1}
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = hedging
		c.Server.TraceRequests = 100_000 // every read's attempts, for when each was sent
	},
		sim.Config{Latency: normal}, sim.Config{Latency: normal}, sim.Config{Latency: normal})
	hung := h.sims[0]
	var faultAt time.Time
	var deadlineMS, normalP99 float64
	var srcAtFault string
	var countAtPlus2s int64 = -1
	// The attempt deadline in force after the fault, at its longest: it is
	// learnt on (up to 725 ms under load, from 343 ms at the fault), and
	// the one at the end of the run may be shorter than one a read met.
	var deadlineMu sync.Mutex
	var deadlineMax time.Duration
	sampled, stopSampling := make(chan struct{}), make(chan struct{})
	// Read from the engine itself, not the admin API: the sampler runs off
	// the test's goroutine, where a failed admin call could not end it.
	sampleDeadline := func() {
		var d time.Duration
		for _, ep := range h.eng.Snapshot().Endpoints {
			if ep.Name == "s0" {
				d = ep.Methods["eth_getBalance"].AttemptTimeout
			}
		}
		deadlineMu.Lock()
		deadlineMax = max(deadlineMax, d)
		deadlineMu.Unlock()
	}
	replies := openLoop(h, 10*time.Millisecond, dur, func(el time.Duration) {
		switch {
		case faultAt.IsZero() && el >= 2*time.Second:
			ep := h.endpoint("s0")
			deadlineMS = ms(ep.Methods["eth_getBalance"].AttemptTimeout)
			srcAtFault = ep.Methods["eth_getBalance"].AttemptTimeoutSource
			normalP99 = ms(ep.Latency.P99)
			faultAt = time.Now()
			hung.SetMode(sim.ModeHang)
			go func() {
				defer close(sampled)
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stopSampling:
						return
					case <-tick.C:
						sampleDeadline()
					}
				}
			}()
		case !faultAt.IsZero() && countAtPlus2s < 0 && time.Since(faultAt) >= 2*time.Second:
			countAtPlus2s = hung.MethodCount("eth_getBalance")
		}
	})
	if !faultAt.IsZero() {
		close(stopSampling)
		<-sampled
	}
	final := hung.MethodCount("eth_getBalance")
	if src := h.endpoint("s0").Methods["eth_getBalance"].AttemptTimeoutSource; srcAtFault == "half" || src == "half" {
		for _, tr := range replies {
			mustOK(t, tr.r) // a client error is one on any machine
		}
		return fmt.Sprintf("s0's deadline was raced at half the request's (%.0f ms, %s at the fault, %s after), its hangs charged only at its own deadline", deadlineMS, srcAtFault, src)
	}
	// Without probes, half-open trials are client reads: after +2s the
	// hung endpoint may get those and nothing else. (With probes the
	// trials are probes and client reads never reach it.) Judged by
	// when the engine sent each attempt (its traces) and the state its
	// breaker was in then (its events): the sim's count at +2s missed
	// requests sent before and counted after on a loaded machine, and
	// a trial of a half-open period that began before +2s (a trial
	// excused in a slowdown held it for the request's deadline) is a
	// trial all the same.
	// The 2 s are rpcdash's own time: an episode of "rpcdash itself
	// slow" (its scheduling lag, its events) excuses the deadlines
	// passed in it, by design, and lengthens the 2 s by its span (a
	// loaded machine's two stalls of 0.5 s, 1 s episodes each, moved
	// the trip from under 2 s to +2.86 s).
	states := breakerStates(h, "s0")
	// At most 3 s more: an engine that called every moment its own
	// stall would otherwise keep a hung endpoint in rotation here.
	// The 2 s hold for an attempt deadline of up to 1 s; one learnt
	// longer from a loaded machine's answers (2.7 s seen at the
	// fault, 5 s later) moves them by the difference: breaker.failures
	// deadlines passed in a row open the breaker, the first of them
	// one deadline after the fault.
	sampleDeadline()
	deadline := max(time.Duration(deadlineMS*float64(time.Millisecond)), deadlineMax)
	within := 2*time.Second + max(deadline-time.Second, 0)
	outBy := faultAt.Add(within + min(ownSlowWithin(h, faultAt, within), 3*time.Second))
	var outside []string
	trials := 0
	for _, tr := range h.traces("limit=100000").Requests {
		for _, at := range tr.Attempts {
			sent := tr.Start.Add(time.Duration(at.StartMS * float64(time.Millisecond)))
			if at.Endpoint != "s0" || sent.Before(outBy) {
				continue
			}
			if st := states.at(sent); st != "half-open" {
				outside = append(outside, fmt.Sprintf("request %s at +%s (breaker %s)", tr.ID, sent.Sub(faultAt).Round(time.Millisecond), st))
				continue
			}
			trials++
		}
	}
	if countAtPlus2s < 0 || len(outside) > 0 {
		s0 := h.endpoint("s0")
		t.Fatalf("hung endpoint still in rotation 2 s after the fault (+%s with its attempt deadline %s and rpcdash's own slow episodes): %d attempts sent to it after that outside a half-open trial: %s; its breaker: %s (now %s, held closed %t, %d failures in a row, last error %q); the pool's and breakers' events since the fault: %s",
			outBy.Sub(faultAt).Round(time.Millisecond), deadline, len(outside), strings.Join(outside, "; "), states.since(faultAt), s0.Breaker.State, s0.Breaker.HeldClosed, s0.Breaker.ConsecutiveFailures, s0.LastError, eventsSince(h, faultAt))
	}
	// A read that met the hang waits one attempt deadline, then one
	// normal answer. "Normal" is the slowest single-attempt read
	// after the fault when the machine is loaded enough to stretch
	// answers past the p99 measured before it. The deadline is the
	// longest in force after the fault (sampled, as for the 2 s above):
	// a half-open trial read met s0's deadline grown to 596 ms from its
	// censored hangs (issue 14's rule), 658 ms in all, against 252 ms
	// measured at the fault.
	// A read in whose life rpcdash measured itself slow (an episode of
	// "rpcdash itself slow", from the stall measured at its start to its
	// end) waits that time too: its race is held while rpcdash judges
	// itself overloaded, and looked at again a deadline later
	// (heldrace.go). rpcdash stalled 1.726 s 1.7 s into a read, whose
	// race the held look sent 719 ms later: 2.56 s in all beside a bound
	// of 1.29 s; a read's race was held 1.3 s in an episode that began
	// with a stall of 337 ms, under a load average of 8 on 2 cores. That
	// time, measured by the engine, and one deadline for the look after
	// it, is all a read is allowed beyond the bound.
	var worst, worstSingle time.Duration
	for _, tr := range replies {
		mustOK(t, tr.r)
		if !tr.sent.After(faultAt) {
			continue
		}
		worst = max(worst, tr.r.took)
		if tr.r.attempts == 1 {
			worstSingle = max(worstSingle, tr.r.took)
		}
	}
	normalAnswer := max(time.Duration(normalP99*float64(time.Millisecond)), worstSingle)
	limit := deadline + normalAnswer + 100*time.Millisecond // scheduling slack on a loaded 2-core box
	stalls := ownStalls(h)
	var over time.Duration
	var overRead timedReply
	var overStall time.Duration
	for _, tr := range replies {
		if !tr.sent.After(faultAt) {
			continue
		}
		stall, held := stalls.within(tr.sent, tr.sent.Add(tr.r.took))
		allowed := limit + stall
		if held {
			allowed += deadline
		}
		if ex := tr.r.took - allowed; ex > over {
			over, overRead, overStall = ex, tr, stall
		}
	}
	if over > 0 {
		t.Fatalf("a read after the fault took %s: attempt deadline %s (%.0fms at the fault) + normal answer %s (+100ms slack) = %s, + rpcdash's own slow episodes in its life %s (and a held race's deadline after them) is %s less; its trace: %s; events since the fault: %s",
			overRead.r.took, deadline, deadlineMS, normalAnswer, limit, overStall, over, traceOf(h, overRead.r.id, faultAt), eventsSince(h, faultAt))
	}
	t.Logf("%d reads, 0 errors; hung endpoint got %d requests (%d before +2s, %d trials sent after +%s); slowest read after the fault %s (deadline %.0fms, slowest single-attempt read %s); its breaker: %s", len(replies), final, countAtPlus2s, trials, outBy.Sub(faultAt).Round(time.Millisecond), worst, deadlineMS, worstSingle, states.since(faultAt))
	return ""
}

// ownSlowWithin is how much of the span from `from`, lengthened by
// itself, rpcdash spent in episodes of its own slowness (pool events
// "rpcdash itself slow"): each one that began before the span's end
// lengthens it by its duration, or to now while it lasts. Episodes of the
// whole pool slow at once do not count: one hung endpoint beside two
// answering is not one.
func ownSlowWithin(h *harness, from time.Time, span time.Duration) time.Duration {
	var grace time.Duration
	var began time.Time
	for _, ev := range h.events() {
		if ev.Type != engine.EventPool || !strings.HasPrefix(ev.Message, "rpcdash itself slow") {
			continue
		}
		switch {
		case ev.To == "slow" && began.IsZero():
			began = ev.Time
		case ev.To == "normal" && !began.IsZero():
			if ev.Time.After(from) && began.Before(from.Add(span+grace)) {
				grace += ev.Time.Sub(maxTime(began, from))
			}
			began = time.Time{}
		}
	}
	if !began.IsZero() && began.Before(from.Add(span+grace)) {
		grace += time.Since(maxTime(began, from))
	}
	return grace
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// breakerTimeline is an endpoint's breaker transitions in order (events).
type breakerTimeline []engine.Event

func breakerStates(h *harness, name string) breakerTimeline {
	var tl breakerTimeline
	for _, ev := range h.events() {
		if ev.Type == engine.EventBreaker && ev.Endpoint == name {
			tl = append(tl, ev)
		}
	}
	return tl
}

// at is the breaker's state at t: the last transition's before it.
func (tl breakerTimeline) at(t time.Time) string {
	st := "closed"
	for _, ev := range tl {
		if ev.Time.After(t) {
			break
		}
		st = ev.To
	}
	return st
}

// since lists the transitions after t, each as +offset from>to.
func (tl breakerTimeline) since(t time.Time) string {
	var out []string
	for _, ev := range tl {
		if ev.Time.After(t) {
			out = append(out, fmt.Sprintf("+%s %s>%s", ev.Time.Sub(t).Round(time.Millisecond), ev.From, ev.To))
		}
	}
	return strings.Join(out, ", ")
}

// eventsSince lists the pool and breaker events after t, for a failure
// that has to say why no breaker opened (a slowdown excused the charges).
func eventsSince(h *harness, t time.Time) string {
	var out []string
	for _, ev := range h.events() {
		if ev.Time.After(t) && (ev.Type == engine.EventPool || ev.Type == engine.EventBreaker) {
			out = append(out, fmt.Sprintf("+%s %s %s %s>%s %q", ev.Time.Sub(t).Round(time.Millisecond), ev.Type, ev.Endpoint, ev.From, ev.To, ev.Message))
		}
	}
	return strings.Join(out, "; ")
}

// traceOf is request id's trace in a line: when it began (from `from`),
// rpcdash's latency for it, and each attempt's endpoint, role, times and
// outcome.
func traceOf(h *harness, id string, from time.Time) string {
	for _, tr := range h.traces("limit=100000").Requests {
		if tr.ID != id {
			continue
		}
		var at []string
		for _, a := range tr.Attempts {
			end := "running"
			if a.EndMS != nil {
				end = fmt.Sprintf("%.0f", *a.EndMS)
			}
			at = append(at, fmt.Sprintf("%s %s %.0f-%s ms %s overdue=%t won=%t", a.Endpoint, a.Role, a.StartMS, end, a.Outcome, a.Overdue, a.Won))
		}
		return fmt.Sprintf("%s began +%s, rpcdash latency %.0f ms, attempts [%s]", id, tr.Start.Sub(from).Round(time.Millisecond), tr.LatencyMS, strings.Join(at, "; "))
	}
	return id + " (no trace)"
}

// ownStall is an episode of "rpcdash itself slow" (pool events): the stall
// the engine measured when it began (its scheduling lag, in the event's
// words) reaches back from the event; the episode lasts to its end.
type ownStall struct {
	began, ended time.Time // ended zero while it lasts
}

type ownStallTimeline []ownStall

var stalledFor = regexp.MustCompile(`stalled for ([0-9.]+[mµn]?s)`)

func ownStalls(h *harness) ownStallTimeline {
	var tl ownStallTimeline
	for _, ev := range h.events() {
		if ev.Type != engine.EventPool || !strings.HasPrefix(ev.Message, "rpcdash itself slow") {
			continue
		}
		switch {
		case ev.To == "slow":
			var d time.Duration
			if m := stalledFor.FindStringSubmatch(ev.Message); m != nil {
				d, _ = time.ParseDuration(m[1])
			}
			tl = append(tl, ownStall{began: ev.Time.Add(-d)})
		case ev.To == "normal" && len(tl) > 0 && tl[len(tl)-1].ended.IsZero():
			tl[len(tl)-1].ended = ev.Time
		}
	}
	return tl
}

// within is how much of [from, to] lies in rpcdash's own slow episodes,
// each from the stall it measured at its start to its end (now while it
// lasts): rpcdash holds an overdue read's race while it judges itself
// overloaded, and looks again a deadline later (heldrace.go). held says
// whether there was any: a look may come a deadline after the episode's end.
func (tl ownStallTimeline) within(from, to time.Time) (stall time.Duration, held bool) {
	for _, s := range tl {
		end := s.ended
		if end.IsZero() {
			end = time.Now()
		}
		if b, e := maxTime(s.began, from), minTime(end, to); e.After(b) {
			stall += e.Sub(b)
			held = true
		}
	}
	return stall, held
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
