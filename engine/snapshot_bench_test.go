package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// BenchmarkSnapshot is the console's per-tick cost on a large pool: 20
// endpoints each with stats for 30 methods, full minute series, client
// windows for every method.
func BenchmarkSnapshot(b *testing.B) { benchmarkSnapshot(b, 0) }

// BenchmarkSnapshotCensored is BenchmarkSnapshot with one attempt in
// every censorEvery cut short (a hedged primary outrun): the latency
// percentiles then take the Kaplan–Meier walk.
func BenchmarkSnapshotCensored(b *testing.B) { benchmarkSnapshot(b, 20) }

func benchmarkSnapshot(b *testing.B, censorEvery int) {
	cfg := Default()
	cfg.Server.Listen, cfg.Server.Admin = "127.0.0.1:0", "127.0.0.1:0"
	for i := range 20 {
		cfg.Endpoints = append(cfg.Endpoints, EndpointConfig{Name: fmt.Sprintf("ep%02d", i), URL: fmt.Sprintf("http://127.0.0.1:%d", 10000+i),
			Provider: fmt.Sprintf("p%d", i%5), Region: "r"})
	}
	e, err := New(cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	methods := make([]string, 30)
	for i := range methods {
		methods[i] = fmt.Sprintf("eth_method%02d", i)
	}
	now := time.Now()
	for i, ep := range e.endpoints {
		for j, m := range methods {
			st := ep.stats(m)
			for k := range 200 {
				d := time.Duration(20+(i+j+k)%80) * time.Millisecond
				if censorEvery > 0 && k%censorEvery == 0 {
					st.latency.RecordCensored(d)
					ep.latency.RecordCensored(d)
				} else {
					st.latency.Record(d)
					ep.latency.Record(d)
				}
				st.rates.Count(window.Attempts, window.Success)
				ep.rates.Count(window.Attempts, window.Success)
				ep.series.answered(now.Add(-time.Duration(k%60)*time.Second), d)
			}
		}
	}
	for _, m := range methods {
		c := e.acct.method(m)
		c.attempts[rolePrimary].Add(1000)
		e.hedge.observePrimary(m, 30*time.Millisecond, false)
		for k := range 200 {
			e.recent.observe(m, time.Duration(20+k%80)*time.Millisecond, clientAnswered, 1)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := e.Snapshot()
		if len(s.Endpoints) != 20 || len(s.Methods) != 30 || len(s.Endpoints[0].Methods) != 30 {
			b.Fatal("incomplete snapshot")
		}
	}
}
