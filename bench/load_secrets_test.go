package bench_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// A provider's URL given to --target carries its key, and bench's report
// quoted it back: `rpcdash bench --target http://…/v2/SECRETKEY123?apikey=SECRET456`
// printed "the first: rpc_error eth_getBalance at +3s: key SECRETKEY123 at
// /v2/SECRETKEY123?apikey=SECRET456 …" from the target's error answer,
// and "Post \"http://…/v2/SECRETKEY123\": EOF" from Go's error when the
// target hung up; an answer's escape sequences reached the terminal too.
func TestBench_TargetSecretsAndEscapesNeverReachTheReport(t *testing.T) {
	const key, qkey = "SECRETKEY123", "SECRET456"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"id":1,`) || strings.Contains(string(b), `"id":1}`) {
			panic(http.ErrAbortHandler) // the connection dropped: Go's error quotes the URL
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"\u001b[2Jinvalid key `+key+` at /v2/`+key+`?apikey=`+qkey+`"}}`)
	}))
	defer srv.Close()
	res, err := bench.Run(context.Background(), bench.Load{URL: srv.URL + "/v2/" + key + "?apikey=" + qkey, Method: "eth_blockNumber",
		Workload: bench.Workload{Rate: 1000, Duration: time.Second, Count: 4, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	rep := bench.Summarize(bench.Policy{Name: "target"}, res, bench.Workload{}, 0)
	var seen strings.Builder
	for _, s := range res.Samples {
		seen.WriteString(s.Err + "\n" + s.Message + "\n")
	}
	seen.WriteString(rep.FirstFailure + "\n" + strings.Join(rep.Warnings, "\n"))
	if rep.RPCErrors == 0 || rep.Transport == 0 {
		t.Fatalf("want both an error answer and a dropped connection, got %d rpc errors, %d transport: %s", rep.RPCErrors, rep.Transport, seen.String())
	}
	for _, bad := range []string{key, qkey, "\x1b"} {
		if strings.Contains(seen.String(), bad) {
			t.Errorf("%q reached the report:\n%s", bad, seen.String())
		}
	}
	if !strings.Contains(seen.String(), "REDACTED") {
		t.Errorf("nothing REDACTED:\n%s", seen.String())
	}
}
