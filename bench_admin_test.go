package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// bench --admin against a real `rpcdash serve`: every row switches the
// instance's policy through PUT /v1/hedge (the events log shows each
// switch, and the rows show its effect), and the instance's own hedge
// settings are back as they were at the end.
func TestBenchAdmin_SwitchesARunningInstanceAndRestoresIt(t *testing.T) {
	const upstream = "median=10ms&sigma=0.3&tail=0.03&tail_min=100ms&tail_max=200ms"
	cfg := writeConfig(t, loopbackServer+`
[hedge]
enabled = true
delay = "120ms"
quantile = 0.9
budget = 0.2

[[endpoints]]
name = "a"
url = "sim://steady?`+upstream+`&seed=1"
provider = "pa"

[[endpoints]]
name = "b"
url = "sim://steady?`+upstream+`&seed=2"
provider = "pb"

[[endpoints]]
name = "c"
url = "sim://steady?`+upstream+`&seed=3"
provider = "pc"
`)
	p := startProc(t, "serve", "--config", cfg)
	m := p.Line(t, addrLine)
	rpc, admin := "http://"+m[1], "http://"+m[2]
	snapshot := func() engine.Snapshot {
		var s engine.Snapshot
		if err := json.Unmarshal([]byte(get(t, admin+"/v1/status")), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := snapshot().Hedge

	var out, errb bytes.Buffer
	args := []string{"bench", "--target", rpc, "--admin", admin, "--policies", "off,immediate", "--delays", "30ms", "--quantiles", "0.95",
		"--rate", "100", "--duration", "1500ms", "--warmup", "300ms", "--format", "json"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var c bench.Comparison
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var names []string
	for _, r := range c.Rows {
		names = append(names, r.Policy)
	}
	if strings.Join(names, ",") != "off,immediate,fixed 30ms,auto p95" || !strings.Contains(c.Target, admin) {
		t.Fatalf("rows %v, target %q", names, c.Target)
	}
	off, immediate, fixed, auto := c.Rows[0], c.Rows[1], c.Rows[2], c.Rows[3]
	if off.HedgedShare != 0 || immediate.HedgedShare < 0.9 || immediate.Amplification < 1.9 || immediate.Wasted == nil || immediate.Wasted.Cancelled == 0 || immediate.Wasted.Source != "engine" {
		t.Errorf("off hedged %.3f; immediate hedged %.3f, amplification %.3f, wasted %+v: the switches did not take",
			off.HedgedShare, immediate.HedgedShare, immediate.Amplification, immediate.Wasted)
	}
	if fixed.HedgedShare > 0.2+10.0/150+0.02 || auto.DelayMS == nil || *auto.DelayMS >= 100 {
		t.Errorf("fixed hedged %.3f under the instance's budget 0.2; auto delay %v", fixed.HedgedShare, auto.DelayMS)
	}

	var switches []string
	var evs struct{ Events []engine.Event }
	if err := json.Unmarshal([]byte(get(t, admin+"/v1/events")), &evs); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Events {
		if ev.Type == engine.EventConfig {
			switches = append(switches, ev.Message)
		}
	}
	want := []string{
		"hedging enabled=false",
		"hedging enabled=true delay=0s budget=1",
		"hedging enabled=true delay=30ms budget=0.2",
		"hedging enabled=true delay=auto quantile=0.95 budget=0.2",
		"hedging enabled=true delay=120ms quantile=0.9 budget=0.2",
	}
	if strings.Join(switches, "\n") != strings.Join(want, "\n") {
		t.Errorf("config events:\n%s\nwant:\n%s", strings.Join(switches, "\n"), strings.Join(want, "\n"))
	}
	after := snapshot().Hedge
	if after.Enabled != before.Enabled || after.Delay != before.Delay || after.Quantile != before.Quantile || after.Budget != before.Budget ||
		after.Delay != 120*time.Millisecond || after.Quantile != 0.9 || after.Budget != 0.2 {
		t.Errorf("hedging before %+v, after %+v", before, after)
	}

	p.Signal(t, syscall.SIGTERM)
	if code := p.Wait(t, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d: %s", code, p.Stderr())
	}
}
