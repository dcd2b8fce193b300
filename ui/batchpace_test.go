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

// A client sending only batches, the probes off: the endpoint table's P50
// and P95 were "—", no data, beside endpoints answering every batch (the
// detail and /v1/status gave the batch pace). P50 shows the batch pace,
// marked b, and P95 says "batch"; an endpoint that answered none still
// shows "—". In process and attached, at 80×24 and 120×36.
func TestView_EndpointTableShowsTheBatchPaceOfABatchOnlyEndpoint(t *testing.T) {
	r := newRig(t, "alpha", "beta", "gamma")
	var els []string
	for i := range 20 {
		els = append(els, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x%040x","latest"]}`, i, i+1))
	}
	for range 6 {
		postRPC(t, "http://"+r.eng.RPCAddr(), "["+strings.Join(els, ",")+"]")
	}
	for name, be := range r.backends(t) {
		for _, sz := range [][2]int{{80, 24}, {120, 36}} {
			m := console(t, be, sz[0], sz[1], false)
			view := m.View()
			answered := 0
			for _, ep := range m.snap.Endpoints {
				row := endpointRow(view, ep.Name)
				if ep.Latency.Count != 0 {
					t.Fatalf("%s: %d single-call latencies; this test sends only batches", ep.Name, ep.Latency.Count)
				}
				if ep.BatchRoundTrips == 0 {
					if strings.Contains(row, "batch") || strings.Count(row, dash) < 2 {
						t.Errorf("%s, %d×%d: %s answered no batch: %q, want — under P50 and P95", name, sz[0], sz[1], ep.Name, row)
					}
					continue
				}
				answered++
				pace := "b" + strings.TrimSpace(fmtMS(ep.BatchPace))
				if !strings.Contains(row, " "+pace+"  batch ") {
					t.Errorf("%s, %d×%d: %s answered %d batches, median %s: row %q, want %q under P50 and batch under P95",
						name, sz[0], sz[1], ep.Name, ep.BatchRoundTrips, ep.BatchPace, row, pace)
				}
			}
			if answered == 0 {
				t.Fatalf("%s: no endpoint answered a batch", name)
			}
		}
	}
}

// endpointRow is the endpoint table's row of the endpoint name (a banner
// above the table may name it too).
func endpointRow(view, name string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, "│▸ "), name+" ") && strings.Contains(l, "closed") {
			return l
		}
	}
	return ""
}
