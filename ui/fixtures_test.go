package ui

import (
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Fixed Snapshots for the goldens: what the screen must show for each, at
// a fixed instant.

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return t0.Add(200 * time.Millisecond) }

// series is a minute of one endpoint: a steady RTT with a wave, failures
// every failEvery seconds (0: none), nothing at all in the seconds of gap.
func series(base time.Duration, failEvery int, gap map[int]bool) []engine.SeriesPoint {
	out := make([]engine.SeriesPoint, engine.SeriesLength)
	for i := range out {
		p := engine.SeriesPoint{Start: t0.Add(time.Duration(i-engine.SeriesLength) * time.Second)}
		if !gap[i] {
			rtt := base + time.Duration((i*7)%5)*base/10
			p.Requests, p.Answers, p.MeanRTT, p.MaxRTT = 7, 7, rtt, rtt*3/2
			if failEvery > 0 && i%failEvery == 0 {
				p.Failures, p.Answers = 4, 3
			}
		}
		out[i] = p
	}
	return out
}

func lat(p50, p95 time.Duration) engine.LatencyStats {
	return engine.LatencyStats{Count: 1000, P50: p50, P90: p95 * 9 / 10, P95: p95, P99: p95 * 2, P999: p95 * 3, Max: p95 * 4, Mean: p50}
}

func endpoint(name, provider, region, domain string, p50, p95 time.Duration) engine.EndpointSnapshot {
	return engine.EndpointSnapshot{
		Name: name, URL: "https://" + name + ".example/REDACTED", Provider: provider, Region: region, Domain: domain, Routable: true,
		Breaker: engine.BreakerSnapshot{State: engine.BreakerClosed, Cooldown: 10 * time.Second},
		Latency: lat(p50, p95), Rates: engine.RateStats{Attempts: 1000, Successes: 990, Failures: 10, RateLimited: 2, ErrorRate: 0.01},
		Head: 21_000_000, Accounting: engine.AccountSnapshot{Primary: 900, Hedge: 40, HedgesFired: 40, HedgesWon: 12},
		Methods: map[string]engine.MethodSnapshot{"eth_call": {Latency: lat(p50, p95), AttemptTimeout: 3 * p95,
			Score: engine.ScoreParts{Latency: p50, LatencySource: "method", FailureRate: 0.01, Attempts: 1000, MinAttempts: 20, ErrorFactor: 1.1, TailFactor: 1, LoadFactor: 1, Cost: p50 * 11 / 10}}},
		Independence: &engine.IndependenceInfo{IPs: []string{"203.0.113." + name[:1]}, ASNs: []string{"AS64500 EXAMPLE-" + provider}, TLSIssuer: "O=Let's Encrypt, CN=R11", CheckedAt: t0},
		Score:        engine.ScoreParts{Latency: p50, LatencySource: "endpoint", FailureRate: 0.01, Attempts: 1000, MinAttempts: 20, ErrorFactor: 1.1, TailFactor: 1, LoadFactor: 1, Cost: p50 * 11 / 10},
		Series:       series(p50, 0, nil),
	}
}

func method(class engine.Class, rate float64, p50, p95, p99 time.Duration, delay time.Duration, src string) engine.MethodStatus {
	m := engine.MethodStatus{Class: class, AccountSnapshot: engine.AccountSnapshot{Requests: 10_000, Primary: 10_000, HedgesFired: 480, HedgesWon: 150,
		FireRate: 0.048, WinRate: 0.31, Amplification: 1.05},
		Client: engine.ClientStats{Requests: int64(rate * 60), PerSecond: rate, P50: p50, P95: p95, P99: p99,
			FireRate: 0.048, WinRate: 0.31, Amplification: 1.05}}
	m.Client.HedgesFired = int64(float64(m.Client.Requests) * m.Client.FireRate)
	if class == engine.ClassRead {
		m.Hedgeable = true
		m.Hedge = &engine.MethodHedge{Enabled: true, Delay: delay, DelaySource: src}
	} else {
		m.AccountSnapshot.HedgesFired, m.AccountSnapshot.HedgesWon, m.FireRate, m.WinRate = 0, 0, 0, 0
		m.Client.HedgesFired, m.Client.FireRate, m.Client.WinRate, m.Client.Amplification = 0, 0, 0, 1
	}
	return m
}

// healthySnapshot: three independent endpoints, traffic flowing.
func healthySnapshot() engine.Snapshot {
	return engine.Snapshot{
		Time: t0, Started: t0.Add(-(2*time.Hour + 5*time.Minute)), Chain: "evm", Routable: 3, LastResort: 3, MaxHead: 21_000_000, MaxLag: 5,
		Endpoints: []engine.EndpointSnapshot{
			endpoint("alchemy", "alchemy", "us-east", "d1", 42*time.Millisecond, 95*time.Millisecond),
			endpoint("infura", "infura", "eu-west", "d2", 55*time.Millisecond, 130*time.Millisecond),
			endpoint("quicknode", "quicknode", "ap-south", "d3", 61*time.Millisecond, 180*time.Millisecond),
		},
		Hedge: engine.HedgeStatus{Enabled: true, Delay: engine.AutoDelay, DelaySource: "config", Quantile: 0.95, MaxExtra: 1, Budget: 0.1, BudgetBurst: 10, BudgetTokens: 7.5},
		Totals: engine.AccountSnapshot{Requests: 30_000, Primary: 30_000, Hedge: 1400, HedgesFired: 1400, HedgesWon: 420,
			FireRate: 0.047, WinRate: 0.3, Amplification: 1.05},
		Methods: map[string]engine.MethodStatus{
			"eth_blockNumber":        method(engine.ClassRead, 12.5, 40*time.Millisecond, 90*time.Millisecond, 160*time.Millisecond, 88*time.Millisecond, "auto"),
			"eth_call":               method(engine.ClassRead, 8.25, 48*time.Millisecond, 120*time.Millisecond, 240*time.Millisecond, 120*time.Millisecond, "live"),
			"eth_getBalance":         method(engine.ClassRead, 6, 45*time.Millisecond, 100*time.Millisecond, 210*time.Millisecond, 250*time.Millisecond, "cold"),
			"eth_sendRawTransaction": method(engine.ClassWrite, 0.2, 80*time.Millisecond, 150*time.Millisecond, 300*time.Millisecond, 0, ""),
		},
		Client: engine.ClientStats{Requests: 1617, PerSecond: 26.95, P50: 44 * time.Millisecond, P95: 110 * time.Millisecond, P99: 230 * time.Millisecond,
			HedgesFired: 76, HedgesWon: 23, FireRate: 0.047, WinRate: 0.3, Amplification: 1.05},
		Demo:     engine.DemoStatus{Enabled: true, Rate: 20},
		Settings: engine.Settings{StatsWindow: 5 * time.Minute},
	}
}

// incidentSnapshot: alchemy's breaker open, infura drained, quicknode under
// an injected latency fault.
func incidentSnapshot() engine.Snapshot {
	s := healthySnapshot()
	a := &s.Endpoints[0]
	a.Routable = false
	a.Breaker = engine.BreakerSnapshot{State: engine.BreakerOpen, ConsecutiveFailures: 3, Cooldown: 20 * time.Second, OpenedAt: t0.Add(-5 * time.Second),
		NextTrialAt: t0.Add(15 * time.Second), Reopens: 1}
	a.Rates = engine.RateStats{Attempts: 200, Successes: 150, Failures: 50, ErrorRate: 0.25}
	a.Series = series(42*time.Millisecond, 3, map[int]bool{58: true, 59: true})
	a.Errors = []engine.EndpointError{{Time: t0.Add(-5 * time.Second), Text: "HTTP 502"}, {Time: t0.Add(-6 * time.Second), Text: "dial tcp: connection refused"}}
	a.LastError, a.LastErrorAt = "HTTP 502", t0.Add(-5*time.Second)
	b := &s.Endpoints[1]
	b.Routable, b.Drained = false, true
	c := &s.Endpoints[2]
	c.Fault = &engine.FaultInfo{Mode: engine.FaultLatency, Rate: 1, Latency: 500 * time.Millisecond, Duration: time.Minute, Since: t0.Add(-18 * time.Second), Expires: t0.Add(42 * time.Second)}
	c.Latency = lat(560*time.Millisecond, 610*time.Millisecond)
	c.Series = series(560*time.Millisecond, 0, nil)
	s.Routable, s.LastResort = 1, 2
	s.Hedge.BudgetTokens = 1.5
	s.Client.Errors = 13
	// The methods' share of them: the reads alchemy failed before its
	// breaker opened.
	for name, n := range map[string]int64{"eth_call": 9, "eth_getBalance": 4} {
		ms := s.Methods[name]
		ms.Client.Errors = n
		s.Methods[name] = ms
	}
	return s
}

// sharedFateSnapshot: two endpoints behind one AS, one whose AS is unknown.
func sharedFateSnapshot() engine.Snapshot {
	s := healthySnapshot()
	s.Endpoints[0].Domain, s.Endpoints[1].Domain = "d1", "d1"
	s.Endpoints[2].Independence.ASNs = []string{"unknown"}
	// Its eth_getLogs limit: that method backs off, the endpoint does not.
	s.Endpoints[1].Methods["eth_getLogs"] = engine.MethodSnapshot{BackoffUntil: t0.Add(20 * time.Second)}
	s.Warnings = []engine.Warning{
		{Endpoints: []string{"alchemy", "infura"}, Reason: "asn", Text: "alchemy and infura share AS13335 (CLOUDFLARENET): one outage takes both"},
		{Endpoints: []string{"quicknode"}, Reason: "asn-unknown", Text: "ASN of quicknode unknown (SERVFAIL): cannot confirm it is independent"},
	}
	return s
}

// noRouteSnapshot: every endpoint out.
func noRouteSnapshot() engine.Snapshot {
	s := incidentSnapshot()
	c := &s.Endpoints[2]
	c.Routable, c.LagExcluded, c.Lag = false, true, 12
	s.Routable = 0
	return s
}

// standbySnapshot: quicknode is a standby, idle while the primaries serve.
func standbySnapshot() engine.Snapshot {
	s := healthySnapshot()
	for i := range s.Endpoints {
		s.Endpoints[i].Role = engine.RolePrimary
	}
	q := &s.Endpoints[2]
	q.Role = engine.RoleStandby
	q.Accounting = engine.AccountSnapshot{}
	q.Rates = engine.RateStats{Attempts: 120, Successes: 120}
	return s
}

// standbyActiveSnapshot: both primaries out (alchemy open, infura drained),
// the standby quicknode takes the traffic.
func standbyActiveSnapshot() engine.Snapshot {
	s := incidentSnapshot()
	for i := range s.Endpoints {
		s.Endpoints[i].Role = engine.RolePrimary
	}
	q := &s.Endpoints[2]
	q.Role, q.Fault = engine.RoleStandby, nil
	q.Latency = lat(61*time.Millisecond, 180*time.Millisecond)
	q.Series = series(61*time.Millisecond, 0, nil)
	s.StandbyActive, s.StandbyReason = true, "primaries routable 0 of 1"
	return s
}

// cutoverSnapshot: infura a canary taking 5% of first attempts, quicknode a
// shadow whose answers are compared with the clients'.
func cutoverSnapshot() engine.Snapshot {
	s := standbySnapshot()
	s.Endpoints[1].Role, s.Endpoints[1].Share = engine.RoleCanary, 0.05
	q := &s.Endpoints[2]
	q.Role, q.Share, q.Routable = engine.RoleShadow, 1, false
	q.Shadow = &engine.ShadowSnapshot{Mirrored: 1200, Compared: 1198, Match: 1180, Mismatch: 3, Tip: 12, Errors: 3, Dropped: 2,
		MatchRate: 1180.0 / 1186, P50: 48 * time.Millisecond, P95: 130 * time.Millisecond,
		PrimaryP50: 42 * time.Millisecond, PrimaryP95: 95 * time.Millisecond,
		LastMismatch: &engine.ShadowMismatch{Method: "eth_call", At: t0.Add(-12 * time.Second)}}
	s.Routable = 2
	return s
}

// cannotServeSnapshot: alchemy answered it cannot serve eth_getLogs and
// trace_block and backs off eth_call after a 429; infura cannot serve
// eth_getLogs either, so quicknode is asked it first.
func cannotServeSnapshot() engine.Snapshot {
	s := healthySnapshot()
	a, b := s.Endpoints[0].Methods, s.Endpoints[1].Methods
	call := a["eth_call"]
	call.BackoffUntil = t0.Add(20 * time.Second)
	a["eth_call"] = call
	a["eth_getLogs"] = engine.MethodSnapshot{CannotServeUntil: t0.Add(10 * time.Second)}
	a["trace_block"] = engine.MethodSnapshot{CannotServeUntil: t0.Add(4 * time.Second)}
	b["eth_getLogs"] = engine.MethodSnapshot{CannotServeUntil: t0.Add(7 * time.Second)}
	return s
}

var fixtures = []struct {
	name string
	snap func() engine.Snapshot
}{
	{"healthy", healthySnapshot},
	{"incident", incidentSnapshot},
	{"shared-fate", sharedFateSnapshot},
	{"no-route", noRouteSnapshot},
	{"standby", standbySnapshot},
	{"standby-active", standbyActiveSnapshot},
	{"cutover", cutoverSnapshot},
	{"cannot-serve", cannotServeSnapshot},
	{"hedged-tail", hedgedTailSnapshot},
}

// hedgedTailSnapshot: alchemy's slow primaries were cut short by hedges
// that won, so its p95 and beyond are lower bounds (the answers end before
// them); quicknode's tail is answered past its censoring, then ends.
func hedgedTailSnapshot() engine.Snapshot {
	s := healthySnapshot()
	a := &s.Endpoints[0]
	a.Latency = engine.LatencyStats{Count: 952, Censored: 48, P50: 42 * time.Millisecond, P90: 71 * time.Millisecond,
		P95: 131 * time.Millisecond, P99: 131 * time.Millisecond, P999: 131 * time.Millisecond, Max: 88 * time.Millisecond, Mean: 45 * time.Millisecond,
		Open: [5]bool{engine.PctP95: true, engine.PctP99: true, engine.PctP999: true}}
	a.Methods["eth_call"] = engine.MethodSnapshot{Latency: a.Latency, AttemptTimeout: 400 * time.Millisecond, Score: a.Score}
	c := &s.Endpoints[2]
	c.Latency = engine.LatencyStats{Count: 990, Censored: 10, P50: 61 * time.Millisecond, P90: 150 * time.Millisecond,
		P95: 1250 * time.Millisecond, P99: 2400 * time.Millisecond, P999: 2400 * time.Millisecond, Max: 2400 * time.Millisecond, Mean: 90 * time.Millisecond,
		Open: [5]bool{engine.PctP999: true}}
	return s
}

// fixedModel is a console showing snap at w×h, as a tick would leave it.
func fixedModel(snap engine.Snapshot, theme themes.Theme, w, h int) Model {
	m := New(Options{Theme: theme, Now: fixedNow, Location: time.UTC, Source: testSource()})
	mm, _ := m.Update(sizeMsg(w, h))
	m = mm.(Model)
	m.onSnapshot(snapshotMsg{snap: snap, events: fixtureEvents()})
	return m
}

func testSource() Source { return Source{RPC: "127.0.0.1:8545", Admin: "127.0.0.1:8546"} }

func fixtureEvents() []engine.Event {
	return []engine.Event{
		{Seq: 1, Time: t0.Add(-40 * time.Second), Type: engine.EventPool, Actor: engine.ActorEngine, Message: "alchemy and infura share AS13335 (CLOUDFLARENET): one outage takes both"},
		{Seq: 2, Time: t0.Add(-20 * time.Second), Type: engine.EventDrain, Endpoint: "infura", From: "active", To: "drained", Actor: engine.ActorConsole, Message: "drained; 2 requests in flight finish"},
		{Seq: 3, Time: t0.Add(-18 * time.Second), Type: engine.EventFault, Endpoint: "quicknode", To: "latency", Actor: engine.ActorAdmin, Message: "fault injected: latency latency=500ms for 1m0s"},
		{Seq: 4, Time: t0.Add(-5 * time.Second), Type: engine.EventBreaker, Endpoint: "alchemy", From: "closed", To: "open", Actor: engine.ActorEngine, Message: "3 consecutive failures; cooldown 20s"},
		{Seq: 5, Time: t0.Add(-3 * time.Second), Type: engine.EventConfig, Actor: engine.ActorConsole, Message: "hedging for eth_call delay=120ms"},
	}
}
