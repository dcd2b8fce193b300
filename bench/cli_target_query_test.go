package bench_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/rpcdash/rpcdash/bench"
)

// A provider's key may be in its URL's query (?apikey=…): bench --target
// dropped the query, so every call went without the key and was refused;
// Go's error showed "Post \"http://…/v2/KEY\"" with no query at all.
func TestMain_TargetKeepsItsQuery(t *testing.T) {
	var mu sync.Mutex
	queries := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		queries[r.URL.Path+"?"+r.URL.RawQuery]++
		mu.Unlock()
		io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":"0x1"}`)
	}))
	defer srv.Close()
	args := []string{"--target", srv.URL + "/v2/KEY123?apikey=Q456&x=1", "--count", "3", "--rate", "100", "--warmup", "0s", "--mix", "eth_blockNumber=1"}
	stdio, _, errb := stdio("", false)
	if err := bench.Main(context.Background(), args, stdio, startEngine); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	mu.Lock()
	defer mu.Unlock()
	for q := range queries {
		if q != "/v2/KEY123?apikey=Q456&x=1" {
			t.Errorf("calls went to %q (%d of them); want /v2/KEY123?apikey=Q456&x=1", q, queries[q])
		}
	}
	if len(queries) == 0 {
		t.Error("no call reached the target")
	}
}
