package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// batchReply is one element of a batch's answer, errors included.
type batchReply struct {
	ID     int
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

// batchReplies decodes a batch's n answers, error answers included.
func batchReplies(t *testing.T, r reply, n int) []batchReply {
	t.Helper()
	var out []batchReply
	if err := json.Unmarshal(r.body, &out); err != nil || len(out) != n {
		t.Fatalf("batch answer HTTP %d %s: want %d answers (%v)", r.status, r.body, n, err)
	}
	return out
}

// newBlockFilter creates a block filter through rpcdash and returns its id.
func newBlockFilter(t *testing.T, h *harness) string {
	t.Helper()
	r := h.call(1, "eth_newBlockFilter")
	mustOK(t, r)
	var id string
	json.Unmarshal([]byte(resultString(t, r)), &id)
	return id
}

func filterCall(id int, method, filter string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":[%q]}`, id, method, filter)
}

// A node runs a batch one call after another: a poll then an uninstall of
// the same filter answers the poll's changes, then true; the reverse
// answers true, then "filter not found". rpcdash ran the two at once, so
// the faster one reached the node first: the poll, slower here, was
// answered "filter not found" (and, the other way round, the poll that
// came after the uninstall got []). A filter's calls now reach its
// endpoint in the batch's order.
func TestBatch_FilterCallsRunInTheBatchOrder(t *testing.T) {
	const slow = 300 * time.Millisecond
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	u := h.sims[0]

	id := newBlockFilter(t, h)
	u.SetMethodLatency("eth_getFilterChanges", slow)
	r := h.post("[" + filterCall(5, "eth_getFilterChanges", id) + "," + filterCall(6, "eth_uninstallFilter", id) + "]")
	got := batchReplies(t, r, 2)
	if got[0].Error != nil || string(got[0].Result) != "[]" || got[1].Error != nil || string(got[1].Result) != "true" {
		t.Fatalf("poll then uninstall answered %s: want [] then true, as the node answers the batch", r.body)
	}
	u.SetMethodLatency("eth_getFilterChanges", 0)

	id = newBlockFilter(t, h)
	u.SetMethodLatency("eth_uninstallFilter", slow)
	r = h.post("[" + filterCall(7, "eth_uninstallFilter", id) + "," + filterCall(8, "eth_getFilterChanges", id) + "]")
	got = batchReplies(t, r, 2)
	if got[0].Error != nil || string(got[0].Result) != "true" || got[1].Error == nil ||
		got[1].Error.Code != -32000 || !strings.Contains(got[1].Error.Message, "filter not found") {
		t.Fatalf("uninstall then poll answered %s: want true then -32000 filter not found, as the node answers the batch", r.body)
	}
}

// Only the calls of one filter wait for each other: viem batches the polls
// of every filter it watches in one tick, and polls of different filters
// run one after another would cost a round trip each. The creation of a
// filter waits for nothing either (no call of the batch can name it).
func TestBatch_CallsOfDifferentFiltersRunAtOnce(t *testing.T) {
	const slow = 200 * time.Millisecond
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	a, b := newBlockFilter(t, h), newBlockFilter(t, h)
	h.sims[0].SetMethodLatency("eth_getFilterChanges", slow)
	h.sims[0].SetMethodLatency("eth_newBlockFilter", slow)
	r := h.post("[" + filterCall(1, "eth_getFilterChanges", a) + "," + filterCall(2, "eth_getFilterChanges", b) +
		`,{"jsonrpc":"2.0","id":3,"method":"eth_newBlockFilter","params":[]}]`)
	for _, g := range batchReplies(t, r, 3) {
		if g.Error != nil {
			t.Fatalf("element %d: %s", g.ID, g.Error.Message)
		}
	}
	for i, id := range strings.Split(r.id, ",") {
		if start := h.settledTrace(id).Attempts[0].StartMS; start >= float64(slow/time.Millisecond) {
			t.Fatalf("element %d started at %.0f ms: it waited for a call of another filter", i, start)
		}
	}
}

// A write after the batch's first write waits for it (write affinity); if
// the first never answers, the second is never sent. Its answer said
// "request timed out … (s0 still working on it)" and its trace showed an
// attempt that timed out: a client reading that would think the write may
// have been carried out, when it is safe to send again.
func TestBatch_WriteThatWaitedPastItsDeadlineSaysItWasNotSent(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.RequestTimeout = 300 * time.Millisecond }, sim.Config{Latency: fixed(0)})
	h.sims[0].SetMode(sim.ModeHang)
	r := h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x01"]},` +
		`{"jsonrpc":"2.0","id":2,"method":"eth_sendRawTransaction","params":["0x02"]}]`)
	got := batchReplies(t, r, 2)
	if n := h.sims[0].MethodCount("eth_sendRawTransaction"); n != 1 {
		t.Fatalf("the endpoint saw %d writes, want 1 (the second waits for the first)", n)
	}
	if e := got[0].Error; e == nil || e.Code != -32000 || !containsAll(e.Message, "still working on it", "sent to s0, which may have carried it out") {
		t.Fatalf("the hanging write answered %s: want the request's timeout, -32000: it may have been carried out", r.body)
	}
	e := got[1].Error
	if e == nil || e.Code != -32603 || !strings.Contains(e.Message, "not sent") || !strings.Contains(e.Message, "first write") ||
		strings.Contains(e.Message, "still working") || !strings.Contains(e.Message, "server.request_timeout 300ms") {
		t.Fatalf("the write that was never sent answered %+v: want -32603 saying it was not sent, waiting for the first write", e)
	}
	tr := h.settledTrace(strings.Split(r.id, ",")[1])
	if len(tr.Attempts) != 0 || tr.Outcome != "error" || tr.ErrorCode != -32603 || tr.Method != "eth_sendRawTransaction" {
		t.Fatalf("the unsent write's trace: %+v; want an error with no attempt", tr)
	}
}

// A stateful method rpcdash knows no filter role of (one methods.stateful
// adds) touches state rpcdash cannot see: it keeps its place among the
// batch's stateful calls, after those before it and before those after it.
func TestBatch_StatefulMethodOfUnknownStateKeepsItsPlace(t *testing.T) {
	const slow = 200 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) { c.Methods.Stateful = []string{"acme_session"} }, sim.Config{Latency: fixed(0)})
	a, b := newBlockFilter(t, h), newBlockFilter(t, h)
	h.sims[0].SetMethodLatency("eth_getFilterChanges", slow)
	h.sims[0].SetMethodLatency("acme_session", slow)
	r := h.post("[" + filterCall(1, "eth_getFilterChanges", a) + `,{"jsonrpc":"2.0","id":2,"method":"acme_session","params":[]},` +
		filterCall(3, "eth_getFilterChanges", b) + "]")
	batchReplies(t, r, 3)
	var starts []float64
	for _, id := range strings.Split(r.id, ",") {
		starts = append(starts, h.settledTrace(id).Attempts[0].StartMS)
	}
	ms := float64(slow / time.Millisecond)
	if starts[1] < ms || starts[2] < 2*ms {
		t.Fatalf("first attempts started at %v ms: want the second after the first's %.0f ms, the third after both", starts, ms)
	}
}

// A write the client has handed over is sent even if the client goes away
// (TestWrites_SentWhenTheClientLeavesBeforeItGoesOut); in a batch, one
// waiting for the batch's first write still waits for it, then is sent.
func TestBatch_WriteWaitingForTheFirstIsSentAfterItsClientLeaves(t *testing.T) {
	t.Parallel()
	const writeTime = 300 * time.Millisecond
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	u := h.sims[0]
	u.SetMethodLatency("eth_sendRawTransaction", writeTime)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	left := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.rpc, strings.NewReader(
			`[{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x01"]},`+
				`{"jsonrpc":"2.0","id":2,"method":"eth_sendRawTransaction","params":["0x02"]}]`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := h.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		left <- err
	}()
	wait, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := u.WaitMethod(wait, "eth_sendRawTransaction", 1); err != nil {
		t.Fatal("the first write never arrived")
	}
	first := time.Now()
	cancel()
	if err := <-left; err == nil {
		t.Fatal("the client got an answer before it left; the test needs the first write held")
	}
	if err := u.WaitMethod(wait, "eth_sendRawTransaction", 2); err != nil {
		t.Fatalf("the second write was not sent after its client left: the endpoint saw %v", u.Submissions())
	}
	if d := time.Since(first); d < writeTime {
		t.Fatalf("the second write arrived %v after the first, which takes %v: it did not wait for it", d, writeTime)
	}
}
