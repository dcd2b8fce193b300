package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

func TestDrill_EmbeddedPassesAndSaysEveryStep(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"drill", "--mode", "error"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for i, name := range bench.DrillSteps {
		if !strings.Contains(out.String(), "[ok] "+string(rune('1'+i))+" "+name+" (") {
			t.Errorf("no passed step %q in:\n%s", name, out.String())
		}
	}
	if !strings.Contains(out.String(), "PASSED in") {
		t.Errorf("no verdict:\n%s", out.String())
	}
	if !strings.HasPrefix(out.String(), "drill: error fault against an embedded engine over sims\n[ok] 1 serving") {
		t.Errorf("not announced before its first step:\n%s", out.String())
	}
	// A running step is printed only when readmission says what it waits
	// for (the breaker's own next trial, or its trials).
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "[..]") && !strings.HasPrefix(l, "[..] 7 readmitted: waiting: alpha's breaker is ") {
			t.Errorf("running step line %q", l)
		}
	}
}

// The unreachable fault (no answer to the connection attempt) drills end to
// end from the command line: the endpoint is cut out as for a hang, and comes
// back through its breaker's trials.
func TestDrill_UnreachableModePasses(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"drill", "--mode", "unreachable", "--format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	var rep bench.DrillReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !rep.Passed || rep.Mode != "unreachable" || len(rep.Steps) != len(bench.DrillSteps) ||
		rep.Steps[1].Summary != "unreachable fault on alpha" || !strings.Contains(rep.Steps[2].Summary, "breaker open") {
		t.Fatalf("report %+v", rep)
	}
	t.Logf("%s; %s", rep.Steps[2].Summary, rep.Steps[6].Summary)
}

// A breaker configured never to open: the drill fails at the cut-out, says
// so, and exits non-zero.
func TestDrill_NeverOpeningBreakerFailsNamingTheStep(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"drill", "--breaker-failures", "1000000", "--step-timeout", "3s"}, &out, &errb)
	if code == 0 {
		t.Fatalf("exit 0 with a breaker that never opens:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), `drill: step "cut out" failed: alpha was not cut out within 3s`) ||
		!strings.Contains(errb.String(), "breaker.failures 1000000") || !strings.Contains(out.String(), `FAILED at step "cut out"`) {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}

// The drill against a running `rpcdash serve`, through its admin API and
// its JSON-RPC port, as JSON.
func TestDrill_AgainstARunningInstance(t *testing.T) {
	cfg := writeConfig(t, loopbackServer+`
[breaker]
cooldown = "1s"

[probes]
interval = "200ms"
asn = "off"

[[endpoints]]
name = "alpha"
url = "sim://steady?median=20ms&sigma=0.1&seed=1"
provider = "pa"

[[endpoints]]
name = "beta"
url = "sim://steady?median=40ms&sigma=0.1&seed=2"
provider = "pb"

[[endpoints]]
name = "gamma"
url = "sim://steady?median=60ms&sigma=0.1&seed=3"
provider = "pc"
`)
	p := startProc(t, "serve", "--config", cfg)
	m := p.Line(t, addrLine)
	var out, errb bytes.Buffer
	code := run([]string{"drill", "--admin", "http://" + m[2], "--target", "http://" + m[1], "--mode", "http429", "--format", "json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	var rep bench.DrillReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !rep.Passed || rep.Endpoint != "alpha" || len(rep.Steps) != len(bench.DrillSteps) || !strings.Contains(rep.Target, m[2]) {
		t.Fatalf("report %+v", rep)
	}
	status := get(t, "http://"+m[2]+"/v1/status")
	if strings.Contains(status, `"fault"`) {
		t.Errorf("a fault outlived the drill:\n%s", status)
	}
	p.Signal(t, syscall.SIGTERM)
	if code := p.Wait(t, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d", code)
	}
}

func TestDrill_RejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "meteor"},
		{"--format", "yaml"},
		{"--target", "http://127.0.0.1:1"},
		{"--admin", "http://127.0.0.1:1"},
		{"--admin", "http://127.0.0.1:1", "--target", "http://127.0.0.1:2", "--breaker-failures", "5"},
		{"--rate", "0"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"drill"}, args...), &out, &errb); code == 0 {
			t.Errorf("%v accepted", args)
		}
	}
}
