package engine

import (
	"testing"
	"time"
)

// The latency check's rule on figures: refused only when the median is
// above every other primary's p95 (and tailSlack more) on a method both
// have at least minJudged attempts of; a bar censoring leaves open judges
// nothing.
func TestJudgeLatency_RefusesOnlyAMedianPastEveryPrimarysP95(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	pace := func(n int64, p50, p95 float64) methodPace { return methodPace{n: n, p50: ms(p50), p95: ms(p95)} }
	quick := primaryPace{name: "quick", methods: map[string]methodPace{"eth_call": pace(500, 20, 40), "eth_getLogs": pace(500, 80, 200)}}
	busy := primaryPace{name: "busy", methods: map[string]methodPace{"eth_call": pace(300, 50, 90)}}
	cases := []struct {
		name      string
		f         latencyFigures
		primaries int
		verdict   string
		method    string
		bar       string // the primary whose p95 is the bar
	}{
		{"no primary, never mirrored", latencyFigures{own: map[string]methodPace{"eth_call": pace(100, 500, 900)}}, 0, verdictNone, "", ""},
		{"twice the quick primary's median, within its p95", latencyFigures{own: map[string]methodPace{"eth_call": pace(100, 40, 60)}, primaries: []primaryPace{quick}}, 1, verdictPass, "eth_call", "quick"},
		{"past the quick primary's p95 but within the busy one's", latencyFigures{own: map[string]methodPace{"eth_call": pace(100, 80, 120)}, primaries: []primaryPace{quick, busy}}, 2, verdictPass, "eth_call", "busy"},
		{"past every primary's p95", latencyFigures{own: map[string]methodPace{"eth_call": pace(100, 200, 300)}, primaries: []primaryPace{quick, busy}}, 2, verdictFail, "eth_call", "busy"},
		{"within tailSlack of the p95", latencyFigures{own: map[string]methodPace{"eth_call": pace(100, 44, 60)}, primaries: []primaryPace{quick}}, 1, verdictPass, "eth_call", "quick"},
		{"too few of its own", latencyFigures{own: map[string]methodPace{"eth_call": pace(minJudged-1, 900, 900)}, primaries: []primaryPace{quick}}, 1, verdictUnjudged, "", ""},
		{"a method no primary has enough of", latencyFigures{own: map[string]methodPace{"eth_chainId": pace(100, 900, 900)}, primaries: []primaryPace{quick}}, 1, verdictUnjudged, "", ""},
		{"the primary's p95 only a lower bound", latencyFigures{own: map[string]methodPace{"eth_call": pace(100, 900, 900)},
			primaries: []primaryPace{{name: "cut", methods: map[string]methodPace{"eth_call": {n: 100, p50: ms(20), p95: ms(40), p95Open: true}}}}}, 1, verdictUnjudged, "", ""},
		{"the worst method is judged", latencyFigures{own: map[string]methodPace{"eth_call": pace(100, 30, 40), "eth_getLogs": pace(100, 400, 500)}, primaries: []primaryPace{quick}}, 1, verdictFail, "eth_getLogs", "quick"},
		{"mirrors alone, slower", latencyFigures{mirrored: 30, mirrorP50: ms(120), mirrorPrimaryP95: ms(15)}, 0, verdictFail, "", ""},
		{"mirrors alone, too few", latencyFigures{mirrored: minJudged - 1, mirrorP50: ms(120), mirrorPrimaryP95: ms(15)}, 0, verdictUnjudged, "", ""},
	}
	for _, c := range cases {
		got := judgeLatency(c.f, c.primaries)
		if got.Verdict != c.verdict || got.Method != c.method || got.Primary != c.bar {
			t.Errorf("%s: %+v, want verdict %s on %q against %q", c.name, got, c.verdict, c.method, c.bar)
		}
	}
}
