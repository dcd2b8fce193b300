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
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		var els []string
		for i := range 20 {
			els = append(els, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x%040x","latest"]}`, i, i+1))
		}
		for range 6 {
			postRPC(t, "http://"+r.eng.RPCAddr(), "["+strings.Join(els, ",")+"]")
		}
		m := console(t, sp, 160, 48, false)
		var trips int64
		for _, ep := range m.snap.Endpoints {
			trips += ep.BatchRoundTrips
		}
		if trips != 6 {
			t.Fatalf("%d upstream batch round trips in the snapshot, want the 6 sent", trips)
		}
		// Each endpoint's detail in turn: a line for one that answered
		// batches, none for one that did not.
		for i, ep := range m.snap.Endpoints {
			m.epCursor = i
			var line string
			for _, l := range m.detailLines(300) {
				if strings.Contains(l, "upstream batches:") {
					line = l
				}
			}
			want := fmt.Sprintf("upstream batches: median round trip %s over %d", fmtDelay(ep.BatchPace), ep.BatchRoundTrips)
			switch {
			case ep.BatchRoundTrips == 0 && line != "":
				t.Errorf("%s answered no batch, and its detail says %q", ep.Name, line)
			case ep.BatchRoundTrips > 0 && (ep.BatchPace <= 0 || !strings.Contains(line, want)):
				t.Errorf("%s: detail line %q, want %q", ep.Name, line, want)
			}
		}
	})
}
