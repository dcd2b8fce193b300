package bench_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpcdash/rpcdash/bench"
)

// A drill against an instance off this machine is refused in the drill's
// words, naming the flag that gave it, before anything is sent: it said
// "bench: target host … is not a loopback address; bench only loads this
// machine", as a failed serving step.
func TestDrill_RefusesARemoteInstanceNamingTheDrillAndItsFlag(t *testing.T) {
	var calls atomic.Int64
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer admin.Close()
	for _, c := range []struct {
		name      string
		cfg       bench.DrillConfig
		flag, url string
	}{
		{"admin", bench.DrillConfig{RPCURL: "http://127.0.0.1:1", Admin: bench.Admin{URL: "http://10.1.2.3:8546"}, Mode: "error"}, "--admin", "http://10.1.2.3:8546"},
		{"admin, no load", bench.DrillConfig{Admin: bench.Admin{URL: "http://10.1.2.3:8546"}, Mode: "error", NoLoad: true}, "--admin", "http://10.1.2.3:8546"},
		{"target", bench.DrillConfig{RPCURL: "http://10.1.2.3:8545", Admin: bench.Admin{URL: admin.URL}, Mode: "error"}, "--target", "http://10.1.2.3:8545"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := bench.Drill(context.Background(), c.cfg, nil)
			if err == nil || rep != nil {
				t.Fatalf("report %+v, err %v: want a refusal", rep, err)
			}
			msg := err.Error()
			for _, want := range []string{"drill: " + c.flag + " " + c.url + `: host "10.1.2.3" is not a loopback address`, "--allow-remote"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "bench") {
				t.Errorf("%q speaks of bench", msg)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the refused drills made %d admin calls", n)
	}
}

// A drill without load has no RPC URL: its report named the target
// "rpcdash at <unparseable url> (admin http://127.0.0.1:…)".
func TestDrill_ANoLoadReportNamesItsTargetPlainly(t *testing.T) {
	inst := newStubInstance(t, healthyPair(), nil)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	rep, _ := bench.Drill(ctx, bench.DrillConfig{Admin: bench.Admin{URL: inst.admin.URL}, Mode: "error", NoLoad: true}, func(s bench.DrillStep) { stop() })
	if rep == nil || rep.Target != "rpcdash with admin "+inst.admin.URL+" (its own traffic, no reads of the drill's)" {
		t.Fatalf("report %+v", rep)
	}
}
