package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A filter lives only on the endpoint that created it. When that
// endpoint's breaker opens on a burst of errors and the endpoint heals, the
// filter is still there: a poll reaches it (no verdict for the breaker)
// rather than being refused until the breaker closes. Refused, viem drops
// the filter and creates another, losing the logs the first one held, and
// ethers logs each failed poll; a client polling the endpoint directly
// gets its changes.
func TestFilters_PollReachesItsEndpointWhileItsBreakerIsOpen(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Breaker.Cooldown = time.Minute }, sim.Config{}, sim.Config{})
	h.adminDo("POST", "/v1/endpoints/s1/drain", "")
	r := h.call(1, "eth_newFilter", map[string]any{"fromBlock": "latest"})
	mustOK(t, r)
	if r.endpoint != "s0" {
		t.Fatalf("filter created on %s, want s0", r.endpoint)
	}
	var id string
	json.Unmarshal([]byte(resultString(t, r)), &id)
	h.adminDo("POST", "/v1/endpoints/s1/undrain", "")

	readUntilOpen(t, h, "s0", h.sims[0])
	h.sims[0].SetMode(sim.ModeNormal)

	before := h.sims[0].Counters().ByMethod["eth_getFilterChanges"]
	for i := 0; i < 3; i++ {
		r := h.call(i, "eth_getFilterChanges", id)
		if r.status != 200 || r.rpcError() != nil {
			t.Fatalf("poll %d of a filter s0 still holds: HTTP %d %s", i, r.status, r.body)
		}
		if r.endpoint != "s0" {
			t.Fatalf("poll answered by %q, want s0", r.endpoint)
		}
	}
	if n := h.sims[0].Counters().ByMethod["eth_getFilterChanges"] - before; n != 3 {
		t.Fatalf("s0 saw %d polls, want 3", n)
	}
	if b := h.endpoint("s0").Breaker; b.State != engine.BreakerOpen {
		t.Fatalf("s0's breaker %s: a poll past an open breaker gives it no verdict", b.State)
	}
}

// One client creating filters by the thousand (15 batches of 1,000
// eth_newBlockFilter in 2-3 s) pushed out another client's filter polled
// 3 s before: its next poll was told "filter not found", and the filter
// was left on its node. A full table now refuses new filters, naming the
// limit, while every filter in it was polled within the last minute.
func TestFilters_AFloodOfFiltersTakesNoFilterAClientStillPolls(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{})
	h.eng.SetMaxFilters(40)
	r := h.call(1, "eth_newBlockFilter")
	mustOK(t, r)
	var id string
	json.Unmarshal([]byte(resultString(t, r)), &id)

	var b strings.Builder
	b.WriteByte('[')
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"eth_newBlockFilter","params":[]}`, i)
	}
	b.WriteByte(']')
	created := h.sims[0].MethodCount("eth_newBlockFilter")
	r = h.post(b.String())
	var answers []struct {
		Result string
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(r.body, &answers); err != nil || len(answers) != 100 {
		t.Fatalf("batch of 100 filter creations: HTTP %d %.300s", r.status, r.body)
	}
	made, refused := 0, 0
	for _, a := range answers {
		switch {
		case a.Error == nil && a.Result != "":
			made++
		case a.Error != nil && a.Error.Code == -32005 && strings.Contains(a.Error.Message, "filter limit: rpcdash holds 40 filters"):
			refused++
		default:
			t.Fatalf("filter creation answered %+v", a)
		}
	}
	if made != 39 || refused != 61 {
		t.Fatalf("%d filters made and %d refused of 100 beside one held; want 39 and 61", made, refused)
	}
	// The batch's creations race past the check (the table had room when
	// they were planned): the endpoint created them.
	t.Logf("the endpoint created %d filters for the batch", h.sims[0].MethodCount("eth_newBlockFilter")-created)
	// Full, the table refuses a creation before it reaches the endpoint.
	created = h.sims[0].MethodCount("eth_newBlockFilter")
	r = h.call(3, "eth_newBlockFilter")
	if e := r.rpcError(); e == nil || e["code"] != float64(-32005) || !strings.Contains(e["message"].(string), "filter limit") {
		t.Fatalf("a filter creation in a full table: HTTP %d %s", r.status, r.body)
	}
	if n := h.sims[0].MethodCount("eth_newBlockFilter") - created; n != 0 {
		t.Fatalf("a creation refused by a full table reached the endpoint (%d)", n)
	}
	if r := h.call(2, "eth_getFilterChanges", id); r.status != 200 || r.rpcError() != nil {
		t.Fatalf("the first client's filter after the flood: HTTP %d %s", r.status, r.body)
	}
}
