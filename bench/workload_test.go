package bench_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

func TestParseMix(t *testing.T) {
	m, err := bench.ParseMix("eth_getBalance=3, eth_call=1,eth_blockNumber")
	if err != nil {
		t.Fatal(err)
	}
	if m.String() != "eth_getBalance=3,eth_call=1,eth_blockNumber=1" {
		t.Fatalf("mix %s", m)
	}
	for _, bad := range []string{"", ",", "eth_call=0", "eth_call=-1", "eth_call=x", "=2", "eth_call,eth_call", `a"b`} {
		if _, err := bench.ParseMix(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseFanout(t *testing.T) {
	for in, want := range map[string]bench.Fanout{"1": {K: 1, Q: 1}, "20": {K: 20, Q: 20}, "5/3": {K: 5, Q: 3}} {
		if got, err := bench.ParseFanout(in); err != nil || got != want {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	for _, bad := range []string{"0", "3/4", "3/0", "x", "2/y", "101"} {
		if _, err := bench.ParseFanout(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestWorkload_ValidateNamesTheFlag(t *testing.T) {
	mix, _ := bench.ParseMix("eth_call")
	ok := bench.Workload{Mix: mix, Rate: 10, Duration: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for flag, mut := range map[string]func(*bench.Workload){
		"--mix":           func(w *bench.Workload) { w.Mix = nil },
		"--rate":          func(w *bench.Workload) { w.Rate = 1e9 },
		"--duration":      func(w *bench.Workload) { w.Duration = 0 },
		"--warmup":        func(w *bench.Workload) { w.Warmup = -time.Second },
		"--control-share": func(w *bench.Workload) { w.ControlShare = 1 },
		"--count":         func(w *bench.Workload) { w.Count = 1e9 },
	} {
		w := ok
		mut(&w)
		if err := w.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: %v", flag, err)
		}
	}
}

type body struct {
	ID     int             `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// A row's plan: warm-up then measured span on one continuous schedule,
// methods in proportion to the mix, the control share, fan-out, and params
// that no two calls share, in this row or another.
func TestPlan_MixTenantsFanoutAndUniqueParams(t *testing.T) {
	mix, _ := bench.ParseMix("eth_getBalance=3,eth_call=1")
	w := bench.Workload{Mix: mix, Rate: 1000, Duration: 4 * time.Second, Warmup: time.Second, Seed: 3,
		ControlShare: 0.2, Fanout: bench.Fanout{K: 2, Q: 2}}
	load := bench.Load{Workload: w, URL: "http://127.0.0.1:1", ControlURLs: []string{"http://127.0.0.1:2", "http://127.0.0.1:3"}}
	ops, err := load.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 5000 {
		t.Fatalf("%d operations, want 5000 over 5 s at 1000/s", len(ops))
	}
	seen := map[string]bool{}
	warm, control, balance, calls := 0, 0, 0, 0
	controlURLs := map[string]int{}
	for i, o := range ops {
		if o.Warm != (o.At < time.Second) {
			t.Fatalf("op %d at %s: warm %v", i, o.At, o.Warm)
		}
		if o.Warm {
			warm++
		}
		if len(o.Methods) != 2 {
			t.Fatalf("op %d has %d calls", i, len(o.Methods))
		}
		for k, m := range o.Methods {
			calls++
			if m == "eth_getBalance" {
				balance++
			}
			var b body
			if err := json.Unmarshal([]byte(o.Bodies[k]), &b); err != nil || b.Method != m {
				t.Fatalf("body %s: %v", o.Bodies[k], err)
			}
			if seen[string(b.Params)] {
				t.Fatalf("params %s sent twice", b.Params)
			}
			seen[string(b.Params)] = true
			if o.Control {
				controlURLs[o.URLs[k]]++
			} else if o.URLs[k] != load.URL {
				t.Fatalf("main call to %s", o.URLs[k])
			}
		}
		if o.Control {
			control++
		}
	}
	if warm != 1000 {
		t.Errorf("%d warm-up operations, want 1000", warm)
	}
	if share := float64(control) / 5000; math.Abs(share-0.2) > 0.02 {
		t.Errorf("control share %.3f, want 0.2", share)
	}
	if controlURLs["http://127.0.0.1:2"] == 0 || controlURLs["http://127.0.0.1:3"] == 0 {
		t.Errorf("control calls not spread: %v", controlURLs)
	}
	if share := float64(balance) / float64(calls); math.Abs(share-0.75) > 0.02 {
		t.Errorf("eth_getBalance share %.3f, want 0.75", share)
	}
	// The same seed gives the same plan; another row, other params.
	again, _ := load.Plan()
	load.Row = 1
	next, _ := load.Plan()
	if again[77].Bodies[1] != ops[77].Bodies[1] || next[77].At != ops[77].At || next[77].Methods[1] != ops[77].Methods[1] {
		t.Fatal("the seed does not fix the plan")
	}
	for _, o := range next {
		for _, b := range o.Bodies {
			var x body
			_ = json.Unmarshal([]byte(b), &x)
			if seen[string(x.Params)] {
				t.Fatalf("row 1 repeats row 0's params %s", x.Params)
			}
		}
	}
}

func TestPlan_CountBoundsTheMeasuredSpan(t *testing.T) {
	mix, _ := bench.ParseMix("eth_call")
	load := bench.Load{Workload: bench.Workload{Mix: mix, Rate: 100, Count: 250, Warmup: 500 * time.Millisecond, Arrivals: bench.Poisson, Seed: 1}, URL: "http://127.0.0.1:1"}
	ops, err := load.Plan()
	if err != nil {
		t.Fatal(err)
	}
	measured := 0
	for _, o := range ops {
		if !o.Warm {
			measured++
		}
	}
	if measured != 250 || len(ops) != 300 {
		t.Fatalf("%d measured of %d, want 250 of 300", measured, len(ops))
	}
}

func TestUniqueParams(t *testing.T) {
	for _, m := range []string{"eth_getBalance", "eth_getTransactionCount", "eth_getCode", "eth_getStorageAt", "eth_call",
		"eth_estimateGas", "eth_getTransactionReceipt", "eth_getTransactionByHash", "eth_getLogs", "getBalance", "getAccountInfo"} {
		a, ok := bench.UniqueParams(m, 1, 1)
		b, _ := bench.UniqueParams(m, 1, 2)
		c, _ := bench.UniqueParams(m, 2, 1)
		if !ok || !json.Valid(a) || string(a) == string(b) || string(a) == string(c) {
			t.Errorf("%s: %s %s %s", m, a, b, c)
		}
	}
	if p, ok := bench.UniqueParams("eth_blockNumber", 1, 1); ok || string(p) != "[]" {
		t.Errorf("eth_blockNumber: %s %v", p, ok)
	}
}
