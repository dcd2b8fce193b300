package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/internal/cli"
)

func stdio(in string, terminal bool) (bench.Stdio, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return bench.Stdio{In: strings.NewReader(in), Out: &out, Err: &errb, Terminal: terminal}, &out, &errb
}

func TestMain_RunsTheComparisonAsJSONToAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	args := []string{"--rate", "40", "--duration", "1s", "--warmup", "250ms", "--policies", "off", "--delays", "", "--quantiles", "0.95",
		"--arrivals", "poisson", "--mix", "eth_getBalance=2,eth_blockNumber=1", "--median", "5ms", "--tail", "0", "--seed", "9",
		"--format", "json", "--out", path}
	io, out, errb := stdio("", false)
	if err := bench.Main(context.Background(), args, io, startEngine); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if out.Len() != 0 || !strings.Contains(errb.String(), "2 row(s) × (250ms warm-up + 1s measured): about 3s") ||
		!strings.Contains(errb.String(), "wrote "+path) || strings.Contains(errb.String(), "row 1/2") {
		t.Fatalf("stdout %q, stderr %q", out.String(), errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c bench.Comparison
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	if c.Workload.Mix != "eth_getBalance=2,eth_blockNumber=1" || c.Workload.Arrivals != "poisson" || c.Workload.Seed != 9 ||
		len(c.Rows) != 2 || c.Rows[1].Policy != "auto p95" || !strings.Contains(c.Target, "seed 9") ||
		len(c.Workload.Notes) != 1 || !strings.Contains(c.Workload.Notes[0], "eth_blockNumber") {
		t.Fatalf("comparison %+v", c)
	}
	for _, r := range c.Rows {
		if r.Calls.N == 0 || r.OK != r.Calls.N {
			t.Errorf("%s: %d sent, %d ok", r.Policy, r.Calls.N, r.OK)
		}
	}
}

func TestMain_RejectsBadFlagsBeforeSendingAnything(t *testing.T) {
	for _, args := range [][]string{
		{"--policies", "sometimes"},
		{"--arrivals", "bursty"},
		{"--params", "{not json"},
		{"--params", `{"a":1}`},
		{"--rate", "1e9"},
		{"--mix", "eth_call=0"},
		{"--fanout", "3/4"},
		{"--format", "yaml"},
		{"--control-share", "1.5"},
		{"--correlated", "0.5", "--tail", "0"},
		{"--endpoints", "0"},
		{"--target", "http://127.0.0.1:1", "--median", "5ms"},
		{"--target", "http://127.0.0.1:1", "--quantiles", "0.9"},
		{"--target", "http://127.0.0.1:1", "--control-share", "0.1"},
		{"--admin", "http://127.0.0.1:1"},
		{"--target", "http://127.0.0.1:1", "--admin", "http://127.0.0.1:2", "--policies", "direct"},
		{"--out", "/nonexistent/dir/report"},
		{"extra"},
		{"--nope"},
	} {
		io, _, errb := stdio("", false)
		if err := bench.Main(context.Background(), append(args, "--duration", "100ms", "--warmup", "0s"), io, startEngine); err == nil {
			t.Errorf("%v accepted", args)
		} else if strings.Contains(errb.String(), "about") {
			t.Errorf("%v: announced a run before refusing it: %s", args, errb.String())
		}
	}
}

// A target off this machine is refused without --allow-remote, over the
// rate cap, and without a confirmation. (No test ever sends to one.)
func TestMain_RemoteTargetsAreCappedAndConfirmed(t *testing.T) {
	remote := []string{"--target", "http://192.0.2.1:8545"}
	for _, tc := range []struct {
		args     []string
		in       string
		terminal bool
		want     string
	}{
		{remote, "", false, "--allow-remote"},
		{append(remote, "--allow-remote", "--rate", "50"), "", false, "at most 10 calls per second"},
		{append(remote, "--allow-remote", "--rate", "5", "--fanout", "4"), "", false, "at most 10 calls per second"},
		{append(remote, "--allow-remote", "--rate", "5", "--duration", "11m"), "", false, "at most 10m0s"},
		{append(remote, "--allow-remote", "--rate", "5"), "", false, "--yes"},
		{append(remote, "--allow-remote", "--rate", "5"), "no\n", true, "not confirmed"},
		{[]string{"--target", "http://127.0.0.1:1", "--admin", "http://192.0.2.1:8546", "--rate", "5"}, "", false, "--allow-remote"},
	} {
		io, _, errb := stdio(tc.in, tc.terminal)
		err := bench.Main(context.Background(), append(tc.args, "--warmup", "0s"), io, startEngine)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want it to say %q", tc.args, err, tc.want)
		}
		if tc.terminal && !strings.Contains(errb.String(), "about to send about 150 calls over 30s to 192.0.2.1:8545") {
			t.Errorf("no warning before the prompt: %q", errb.String())
		}
	}
}

// Every bad value is a usage error (rpcdash exits 2 for it) naming its
// flag, refused before anything is sent; a value given is never taken for
// a default (--timeout 0s ran with 10s, --max-extra 0 with 1, --batch 0
// without batches).
func TestMain_BadValuesAreUsageErrorsNamingTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--rate", "-5"}, "--rate"},
		{[]string{"--duration", "0s"}, "--duration"},
		{[]string{"--rate", "0.1"}, "--duration"}, // 0.01 calls in 100ms: none measured
		{[]string{"--mix", "eth_call=abc"}, "--mix"},
		{[]string{"--method", "eth_call", "--mix", "eth_call=1"}, "--mix"},
		{[]string{"--policies", "bogus"}, "--policies"},
		{[]string{"--policies", "auto:2"}, "--policies"},
		{[]string{"--quantiles", "1.5"}, "--quantiles"},
		{[]string{"--endpoints", "0"}, "--endpoints"},
		{[]string{"--tail", "2"}, "--tail"},
		{[]string{"--tail-min", "2s"}, "--tail-max"},
		{[]string{"--correlated", "0.5", "--tail", "0"}, "--correlated"},
		{[]string{"--fanout", "0"}, "--fanout"},
		{[]string{"--batch", "0"}, "--batch"},
		{[]string{"--batch", "1001"}, "--batch"},
		{[]string{"--batch", "-1"}, "--batch"},
		{[]string{"--batch", "10", "--fanout", "3"}, "--batch"},
		{[]string{"--count", "0"}, "--count"},
		{[]string{"--params", "notjson"}, "--params"},
		{[]string{"--delays", "-5ms"}, "--delays"},
		{[]string{"--arrivals", "burst"}, "--arrivals"},
		{[]string{"--control-share", "2"}, "--control-share"},
		{[]string{"--timeout", "0s"}, "--timeout"},
		{[]string{"--warmup", "-1s"}, "--warmup"},
		{[]string{"--deadline", "-1s"}, "--deadline"},
		{[]string{"--max-extra", "0"}, "--max-extra"},
		{[]string{"--target", "127.0.0.1"}, "--target"},
		{[]string{"--target", "http://127.0.0.1:1", "--capacity", "-1"}, "--capacity"},
		{[]string{"--target", "http://127.0.0.1:1", "--control-share", "0.1"}, "--control-target"},
	} {
		io, out, errb := stdio("", false)
		// Short, should it run; before the value under test, which wins.
		args := append([]string{"--duration", "100ms", "--warmup", "0s"}, tc.args...)
		err := bench.Main(context.Background(), args, io, startEngine)
		var u cli.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%v: %v; want a usage error naming %s", tc.args, err, tc.flag)
		}
		if out.Len() > 0 || strings.Contains(errb.String(), "about") {
			t.Errorf("%v: ran: stdout %q, stderr %q", tc.args, out.String(), errb.String())
		}
	}
}

// A target that takes connections but answers none of the calls (here
// HTTP 500 without a JSON-RPC body, a transport failure) fails the run:
// the report is written, its latency figures left out (they would be the
// failures' times), and Main's error, not a usage error, says no call got
// an answer.
func TestMain_RowWithoutAnswersFailsAndShowsNoLatencies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	for _, format := range []string{"table", "json"} {
		io, out, _ := stdio("", false)
		err := bench.Main(context.Background(), []string{"--target", srv.URL, "--rate", "50", "--duration", "200ms", "--warmup", "0s",
			"--format", format}, io, startEngine)
		var u cli.UsageError
		if err == nil || errors.As(err, &u) || !strings.Contains(err.Error(), "none of 10 calls got an answer (10 transport failures") {
			t.Errorf("%s: %v; want the run failed, saying no call got an answer", format, err)
		}
		switch format {
		case "table":
			if !strings.Contains(out.String(), "target         -  10    -    -    -      -    -") {
				t.Errorf("the table shows latencies of failed calls:\n%s", out.String())
			}
		case "json":
			var c bench.Comparison
			if jerr := json.Unmarshal(out.Bytes(), &c); jerr != nil || len(c.Rows) != 1 {
				t.Fatalf("%v:\n%s", jerr, out.String())
			}
			if f := c.Rows[0].Calls; !f.Unanswered || f.N != 10 || f.P50 != 0 || f.Max != 0 {
				t.Errorf("calls %+v; want 10 unanswered, no figures", f)
			}
		}
	}
}
