package engine

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// With no shadow in the pool a read plans no mirror without looking at the
// endpoints or the clock; with one, the clock is read only for a shadow
// the share draw picked. Roles changed at runtime keep the count.
func TestPlanMirror_ReadsNoClockWithoutAShadowDrawn(t *testing.T) {
	var clockReads atomic.Int64
	cfg := Default()
	cfg.Endpoints = []EndpointConfig{{Name: "alpha", URL: "http://127.0.0.1:1"}, {Name: "beta", URL: "http://127.0.0.1:2"}}
	draw := 0.5
	e, err := New(cfg, Options{Now: func() time.Time { clockReads.Add(1); return time.Unix(1e9, 0) }, Rand: func() float64 { return draw }})
	if err != nil {
		t.Fatal(err)
	}
	req := jsonrpc.NewRequest(json.RawMessage("1"), "eth_getBalance", json.RawMessage(`["0x00","0x10"]`))
	p := plan{method: "eth_getBalance", class: jsonrpc.ClassRead}
	res := result{ep: e.endpoints[0], body: bytes.NewBufferString(`{"jsonrpc":"2.0","id":1,"result":"0x1"}`)}
	plan := func() *mirrorJob {
		before := clockReads.Load()
		job := e.planMirror(req, p, res)
		if n := clockReads.Load() - before; n > 0 && job == nil {
			t.Fatalf("planning no mirror read the clock %d times", n)
		}
		return job
	}
	if job := plan(); job != nil {
		t.Fatal("a mirror planned with no shadow")
	}
	share := 0.25
	if _, err := e.SetRole(ActorAdmin, "beta", RoleShadow, &share); err != nil {
		t.Fatal(err)
	}
	if job := plan(); job != nil { // draw 0.5 ≥ share 0.25
		t.Fatal("a mirror planned for a shadow the draw did not pick")
	}
	draw = 0.1
	if job := plan(); job == nil || len(job.targets) != 1 || job.targets[0].Name != "beta" {
		t.Fatalf("drawn shadow: job %+v", job)
	}
	if _, err := e.SetRole(ActorAdmin, "beta", RolePrimary, nil); err != nil {
		t.Fatal(err)
	}
	if e.shadows.Load() != 0 || plan() != nil {
		t.Fatalf("after the shadow's promotion: %d shadows counted", e.shadows.Load())
	}
}

// A shadow's answer byte-equal to the client's matches without decoding;
// the client's answer is decoded once however many shadows compare with it.
func TestCompareAnswers_SameBytesMatchAndTheClientIsDecodedOnce(t *testing.T) {
	c := newClientAnswer([]byte(`{"jsonrpc":"2.0","id":1,"result":{"a":1,"b":[2,3]}}`))
	if got := compareAnswers(c, []byte(`{"jsonrpc":"2.0","id":1,"result":{"a":1,"b":[2,3]}}`), false); got != shadowMatch {
		t.Fatalf("same bytes: %s", got)
	}
	if c.ok {
		t.Fatal("the client's answer was decoded for a byte-equal result")
	}
	for _, tc := range []struct{ shadow, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"b":[2,3],"a":1}}`, shadowMatch},
		{`{"jsonrpc":"2.0","id":1,"result":{"a":2,"b":[2,3]}}`, shadowMismatch},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}`, shadowError},
		{`not json`, shadowError},
	} {
		if got := compareAnswers(c, []byte(tc.shadow), false); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.shadow, got, tc.want)
		}
	}
	if a := testing.AllocsPerRun(50, func() { c.decoded() }); a != 0 {
		t.Fatalf("the client's answer is decoded again: %.0f allocations a call", a)
	}
}
