package ui

import (
	"fmt"
	"strings"
	"testing"
)

// An endpoint's detail says how fast it answered upstream batches, which
// orders a batch's endpoints: a client sending only batches leaves the
// latency columns (single calls' and probes') empty.
func TestView_DetailSaysTheBatchPace(t *testing.T) {
	for _, name := range []string{"in-process", "attached"} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, "alpha", "beta")
			var els []string
			for i := range 20 {
				els = append(els, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x%040x","latest"]}`, i, i+1))
			}
			for range 6 {
				postRPC(t, "http://"+r.eng.RPCAddr(), "["+strings.Join(els, ",")+"]")
			}
			m := console(t, r.backends(t)[name], 160, 48, false)
			var trips int64
			for _, ep := range m.snap.Endpoints {
				trips += ep.BatchRoundTrips
			}
			if trips != 6 {
				t.Fatalf("%d upstream batch round trips in the snapshot, want the 6 sent", trips)
			}
			// The cursor on an endpoint that answered batches.
			for i, e := range m.snap.Endpoints {
				if e.BatchRoundTrips > 0 {
					m.epCursor = i
					break
				}
			}
			ep := m.snap.Endpoints[m.epCursor]
			var line string
			for _, l := range m.detailLines(300) {
				if strings.Contains(l, "upstream batches:") {
					line = l
				}
			}
			want := fmt.Sprintf("upstream batches: median round trip %s over %d", fmtDelay(ep.BatchPace), ep.BatchRoundTrips)
			if ep.BatchPace <= 0 || !strings.Contains(line, want) {
				t.Errorf("%s: detail line %q, want %q", ep.Name, line, want)
			}
			// One that answered none has no such line.
			m.epCursor = 1 - m.epCursor
			for _, l := range m.detailLines(300) {
				if strings.Contains(l, "upstream batches:") && m.snap.Endpoints[m.epCursor].BatchRoundTrips == 0 {
					t.Errorf("%s answered no batch, and its detail says %q", m.snap.Endpoints[m.epCursor].Name, l)
				}
			}
		})
	}
}
