package bench_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// 160 calls, the 80th and the 160th held a second: 1.25 % of the calls are
// slow, so the p99 (the 159th of 160, nearest rank) is a slow one. A
// histogram's rounded rank read the 158th, a fast one: the report said
// p99 23 ms while 2 of 160 calls took over 300 ms.
// The p99 is the second slowest whatever the load on the machine.
func TestCompare_P99OfFewCallsIsTheNearestRank(t *testing.T) {
	const slow = time.Second
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := decode(t, r)
		if (q.ID+1)%80 == 0 { // the body's id is the call's sequence number
			select {
			case <-time.After(slow):
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":"0x1"}`, q.ID)
	}))
	defer srv.Close()

	c, err := bench.Compare(context.Background(), bench.CompareConfig{Target: bench.Target{URL: srv.URL},
		Workload: bench.Workload{Mix: bench.Mix{{Method: "eth_getBalance", Weight: 1}}, Rate: 200, Count: 160, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	f := c.Rows[0].Calls
	if f.N != 160 || f.P99 < float64(slow.Milliseconds()) || f.Max < f.P99 {
		t.Errorf("n %d, p99 %.1f ms, max %.1f ms: want 160 calls and a p99 of at least %s (2 of 160 calls took that long)", f.N, f.P99, f.Max, slow)
	}
}
