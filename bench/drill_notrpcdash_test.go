package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// Another program at the drill's --admin (a web server's error page, a
// JSON-RPC node's error object) is named as not rpcdash, with its URL,
// as status --admin names it: the drill printed "admin API POST
// /v1/drill: HTTP 501: <!DOCTYPE HTML>?<html lang=…", naming neither.
func TestDrill_AnotherProgramAtAdminIsNamedAsNotRpcdash(t *testing.T) {
	for _, c := range []struct{ name, body string }{
		{"web page", "<!DOCTYPE HTML>\n<html><body><h1>Error response</h1></body></html>"},
		{"JSON-RPC node", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"use POST"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusMethodNotAllowed)
				_, _ = w.Write([]byte(c.body))
			}))
			defer other.Close()
			rep, err := bench.Drill(context.Background(), bench.DrillConfig{Admin: bench.Admin{URL: other.URL}, Mode: "error", NoLoad: true}, nil)
			if err == nil {
				t.Fatalf("report %+v: want an error", rep)
			}
			msg := err.Error()
			if want := "no rpcdash admin API at " + other.URL; !strings.Contains(msg, want) || !strings.Contains(msg, "not an rpcdash answer") {
				t.Errorf("%q lacks %q and \"not an rpcdash answer\"", msg, want)
			}
			if strings.Contains(msg, "<!DOCTYPE") || strings.Contains(msg, "use POST") {
				t.Errorf("%q relays the other program's answer", msg)
			}
		})
	}
}

// A --target that is not an rpcdash (a node answering the drill's reads
// itself, without X-Rpcdash-Endpoint) fails the drill at its first step,
// naming the target: the drill passed "serving" with "gamma serves and is
// the best healthy endpoint" of reads no endpoint of the instance had
// answered ("the last 20 reads were answered by (no header) 20"), then
// failed "cut out" saying gamma was not cut out.
func TestDrill_TargetThatIsNotRpcdashFailsServing(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond})
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, req.ID)
	}))
	defer node.Close()
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: node.URL, Admin: bench.Admin{URL: eng.AdminURL}, Mode: "error", StepTimeout: 3 * time.Second}, nil)
	logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || de.Step != bench.StepServing || rep == nil || rep.Passed {
		t.Fatalf("err %v: want the serving step to fail", err)
	}
	for _, want := range []string{node.URL, "without X-Rpcdash-Endpoint", "not an rpcdash"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
	if len(rep.Steps) != 1 {
		t.Errorf("%d steps ran, want the drill to stop at serving: %+v", len(rep.Steps), rep.Steps)
	}
}

// A --target that is another rpcdash, whose endpoints have the names of
// the instance's at --admin, fails the drill at its first step: the drill
// passed "serving" with "a serves and is the best healthy endpoint" of
// reads the faulted instance never took, then failed "cut out" with "a was
// not cut out within 10s: 0 attempts sent to it".
func TestDrill_TargetThatIsAnotherInstanceFailsServing(t *testing.T) {
	spec := bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond}
	faulted := startDrillEngine(t, spec)
	other := startDrillEngine(t, spec)
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: other.RPCURL, Admin: bench.Admin{URL: faulted.AdminURL}, Mode: "error", StepTimeout: 3 * time.Second}, nil)
	logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || de.Step != bench.StepServing || rep == nil || rep.Passed {
		t.Fatalf("err %v: want the serving step to fail", err)
	}
	for _, want := range []string{other.RPCURL, "are not this instance's", "never meet"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
}
