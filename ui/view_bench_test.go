package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// largeSnapshot is a pool of 20 endpoints and 30 methods, every endpoint
// with a full minute of series and stats for every method.
func largeSnapshot() engine.Snapshot {
	s := healthySnapshot()
	s.Endpoints = nil
	s.Methods = map[string]engine.MethodStatus{}
	for i := range 20 {
		ep := endpoint(fmt.Sprintf("endpoint-%02d", i), fmt.Sprintf("prov%d", i%5), "region", fmt.Sprintf("d%d", i%5),
			time.Duration(30+i)*time.Millisecond, time.Duration(80+3*i)*time.Millisecond)
		ep.Series = series(time.Duration(30+i)*time.Millisecond, 7, map[int]bool{i: true})
		ep.Methods = map[string]engine.MethodSnapshot{}
		for j := range 30 {
			ep.Methods[fmt.Sprintf("eth_method%02d", j)] = engine.MethodSnapshot{Latency: ep.Latency}
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	for j := range 30 {
		s.Methods[fmt.Sprintf("eth_method%02d", j)] = method(engine.ClassRead, 10, 40*time.Millisecond, 90*time.Millisecond, 200*time.Millisecond, 90*time.Millisecond, "auto")
	}
	return s
}

// BenchmarkFrame is one frame of a 20-endpoint × 30-method pool: a
// Snapshot taken in and the view rendered. "new-second" frames carry a new
// second of series for every endpoint (all 20 sparklines pushed and
// redrawn: one tick in four at the default 250 ms refresh); "same-second"
// frames do not (the other three).
func BenchmarkFrame(b *testing.B) {
	for _, sz := range [][2]int{{160, 48}, {100, 30}} {
		for _, fresh := range []bool{true, false} {
			name := fmt.Sprintf("%dx%d/same-second", sz[0], sz[1])
			if fresh {
				name = fmt.Sprintf("%dx%d/new-second", sz[0], sz[1])
			}
			b.Run(name, func(b *testing.B) {
				base := largeSnapshot()
				m := fixedModel(base, themes.Default(), sz[0], sz[1])
				const frames = 2000
				snaps := make([]engine.Snapshot, frames)
				for i := range snaps {
					snaps[i] = base
					if !fresh {
						continue
					}
					snaps[i].Endpoints = append([]engine.EndpointSnapshot(nil), base.Endpoints...)
					for k := range snaps[i].Endpoints {
						ser := append([]engine.SeriesPoint(nil), base.Endpoints[k].Series[i%60:]...)
						for j := 0; len(ser) < 60; j++ {
							ser = append(ser, engine.SeriesPoint{Start: base.Endpoints[k].Series[59].Start.Add(time.Duration(j+1) * time.Second),
								Requests: 5, Answers: 5, MeanRTT: time.Duration(30+j%20) * time.Millisecond})
						}
						last := ser[59].Start
						ser = append(ser[1:], engine.SeriesPoint{Start: last.Add(time.Duration(i+1) * time.Second), Requests: 5, Answers: 5, MeanRTT: 40 * time.Millisecond})
						snaps[i].Endpoints[k].Series = ser
					}
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if i == frames {
						b.Fatal("benchmark ran out of prepared frames")
					}
					m.onSnapshot(snapshotMsg{snap: snaps[i]})
					if len(m.View()) == 0 {
						b.Fatal("empty view")
					}
					i++
				}
			})
		}
	}
}

// BenchmarkView is the view alone (a redraw without a new Snapshot).
func BenchmarkView(b *testing.B) {
	m := fixedModel(largeSnapshot(), themes.Default(), 160, 48)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkTuningView is one frame of the tuning view (percentile plot
// and table at 120×36, histogram at 80×24) over the fixture's 5000
// primaries: View alone, as a frame redraws it.
func BenchmarkTuningView(b *testing.B) {
	md := withTrial(tuningDistribution(), false)
	for _, sz := range [][2]int{{120, 36}, {80, 24}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			m := tuningModel(healthySnapshot(), md, sz[0], sz[1])
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}
