package bench_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/bench"
)

func TestMain_RunsTheComparisonAsJSON(t *testing.T) {
	var out bytes.Buffer
	args := []string{"--rate", "40", "--duration", "1s", "--warmup", "250ms", "--policies", "off,auto", "--arrivals", "poisson", "--json"}
	if err := bench.Main(args, &out, startEngine); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var c bench.Comparison
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if c.Method != "eth_getBalance" || c.Arrivals != "poisson" || len(c.Runs) != 2 || c.Runs[1].Policy != "auto p95" {
		t.Fatalf("comparison %+v", c)
	}
	for _, r := range c.Runs {
		if r.Requests == 0 || r.OK != r.Requests {
			t.Errorf("%s: %d sent, %d ok", r.Policy, r.Requests, r.OK)
		}
	}
}

func TestMain_RejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--policies", "sometimes"},
		{"--arrivals", "bursty"},
		{"--params", "{not json"},
		{"--rate", "1e9"},
		{"extra"},
		{"--nope"},
	} {
		var out bytes.Buffer
		if err := bench.Main(args, &out, startEngine); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if err := bench.Main(nil, &bytes.Buffer{}, nil); err == nil || !strings.Contains(err.Error(), "starter") {
		t.Errorf("nil starter: %v", err)
	}
}
