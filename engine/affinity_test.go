package engine_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
)

// slowRead is the taker's read latency in these tests: the other node
// answers at once, so a read that reaches it (first, or by a hedge after
// affinityHedgeDelay) wins by a wide margin.
const (
	slowRead           = 80 * time.Millisecond
	affinityHedgeDelay = "5ms"
)

// affinityPool is an engine in front of two mempool nodes, a and b,
// hedging every read after affinityHedgeDelay with room in the budget.
func affinityPool(t *testing.T, clock *testutil.Clock, mut func(*engine.Config)) (*harness, map[string]*mempoolNode) {
	t.Helper()
	nodes := map[string]*mempoolNode{}
	for _, name := range []string{"a", "b"} {
		nodes[name] = newMempoolNode(t, name)
	}
	h := startHarness(t, clock, func(c *engine.Config) {
		for i, name := range []string{"a", "b"} {
			c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: name, URL: nodes[name].srv.URL,
				Provider: "p" + strconv.Itoa(i), Region: "r" + strconv.Itoa(i)})
		}
		c.Hedge.Enabled = true
		c.Hedge.Delay = affinityHedgeDelay
		c.Hedge.Budget, c.Hedge.BudgetBurst = 1, 1000
		if mut != nil {
			mut(c)
		}
	})
	return h, nodes
}

// sendTx sends the transaction of nonce through rpcdash and returns the
// node that took it and the other one.
func sendTx(t *testing.T, h *harness, nodes map[string]*mempoolNode, nonce int) (taker, other *mempoolNode) {
	t.Helper()
	r := h.call(1000+nonce, "eth_sendRawTransaction", rawTx(nonce))
	mustOK(t, r)
	for name, n := range nodes {
		if name == r.endpoint {
			taker = n
		} else {
			other = n
		}
	}
	if taker == nil {
		t.Fatalf("the write was answered by %q, not a node", r.endpoint)
	}
	return taker, other
}

// warmUp sends reads no write affects, so that the router measures the
// nodes' latencies.
func warmUp(t *testing.T, h *harness) {
	t.Helper()
	for i := range 30 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
}

func resultOf(t *testing.T, r reply) json.RawMessage {
	t.Helper()
	var m struct{ Result json.RawMessage }
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	return m.Result
}

func nonceOf(t *testing.T, r reply) int {
	t.Helper()
	var s string
	if err := json.Unmarshal(resultOf(t, r), &s); err != nil {
		t.Fatalf("nonce answer %s: %v", r.body, err)
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		t.Fatalf("nonce answer %s: %v", r.body, err)
	}
	return int(n)
}

// pendingReads sends n pending-nonce reads and counts those answered by
// taker with the nonce after the write (fresh), those answered with an
// older one (stale), and those hedged or sent more than once.
func pendingReads(t *testing.T, h *harness, taker *mempoolNode, next, n int) (fresh, stale, duplicated int) {
	t.Helper()
	for i := range n {
		r := h.call(100+i, "eth_getTransactionCount", addr, "pending")
		mustOK(t, r)
		switch got := nonceOf(t, r); {
		case got == next && r.endpoint == taker.name:
			fresh++
		case got < next:
			stale++
		default:
			t.Fatalf("pending nonce %d from %s, want at most %d", got, r.endpoint, next)
		}
		if r.hedged || r.attempts != 1 {
			duplicated++
		}
	}
	return fresh, stale, duplicated
}

// The wallet's case: it sends a transaction, then asks for its pending
// nonce to sign the next one. Talking to the node that took the
// transaction it gets the nonce after it; through rpcdash the read went by
// score (or by a hedge) to the faster node, whose mempool has not seen the
// transaction: the old nonce, and the next transaction reuses it
// ("replacement transaction underpriced"). 20 of 20 reads answered by the
// faster node with the stale nonce before, 0 after.
func TestWriteAffinity_PendingNonceReadSeesTheWrite(t *testing.T) {
	t.Parallel()
	h, nodes := affinityPool(t, nil, nil)
	taker, other := sendTx(t, h, nodes, 0)
	taker.readDelay.Store(int64(slowRead))
	warmUp(t, h)

	fresh, stale, duplicated := pendingReads(t, h, taker, 1, 20)
	t.Logf("20 pending nonce reads after a write taken by %s: %d answered by it with nonce 1, %d with the stale nonce 0 (by %s), %d hedged or sent twice",
		taker.name, fresh, stale, other.name, duplicated)
	if fresh != 20 || duplicated != 0 {
		t.Fatalf("%d of 20 pending nonce reads answered with the stale nonce, %d hedged: want every one answered by %s, once", stale, duplicated, taker.name)
	}

	r := h.call(2, "eth_getBlockByNumber", "pending", false)
	mustOK(t, r)
	var block struct{ Transactions []string }
	json.Unmarshal(resultOf(t, r), &block)
	if r.endpoint != taker.name || !slices.Contains(block.Transactions, txHash(rawTx(0))) {
		t.Fatalf("the pending block, answered by %s, holds %v: want %s's, holding the write", r.endpoint, block.Transactions, taker.name)
	}
}

// viem's getTransaction throws TransactionNotFoundError on a null: the
// lookup of the hash a write just answered goes to the node that took it.
// A hash no write through rpcdash answered is routed as before.
func TestWriteAffinity_TxHashLookupFindsTheWrite(t *testing.T) {
	t.Parallel()
	h, nodes := affinityPool(t, nil, nil)
	taker, other := sendTx(t, h, nodes, 0)
	taker.readDelay.Store(int64(slowRead))
	warmUp(t, h)

	hash := txHash(rawTx(0))
	found, null := 0, 0
	for i := range 20 {
		r := h.call(100+i, "eth_getTransactionByHash", hash)
		mustOK(t, r)
		if string(resultOf(t, r)) == "null" {
			null++
		} else if r.endpoint == taker.name && !r.hedged {
			found++
		}
	}
	t.Logf("20 lookups of the hash a write answered: %d found on %s, %d answered null (by %s)", found, taker.name, null, other.name)
	if found != 20 {
		t.Fatalf("%d of 20 lookups answered null: want every one found on %s, not hedged", null, taker.name)
	}

	r := h.call(3, "eth_getTransactionByHash", "0x"+fmt.Sprintf("%064x", 0xbeef))
	mustOK(t, r)
	if r.endpoint != other.name {
		t.Errorf("a hash no write answered was answered by %s (hedged %v): want the faster %s, as before", r.endpoint, r.hedged, other.name)
	}

	st := h.status().WriteAffinity
	if st == nil || st.Endpoint != taker.name || st.Hashes != 1 || st.Until.IsZero() {
		t.Fatalf("status write_affinity %+v, want %s holding 1 hash", st, taker.name)
	}
	_, raw := h.adminDo("GET", "/v1/status", "")
	var wire struct {
		WriteAffinity map[string]any `json:"write_affinity"`
	}
	json.Unmarshal(raw, &wire)
	if wire.WriteAffinity["endpoint"] != taker.name || wire.WriteAffinity["hashes"] != float64(1) || wire.WriteAffinity["until"] == nil {
		t.Errorf("GET /v1/status write_affinity = %v", wire.WriteAffinity)
	}
}

// A sender's writes reach one mempool in nonce order: spread over two
// nodes that do not gossip, each holds a gap. 12 consecutive writes.
func TestWriteAffinity_ConsecutiveWritesStayOnOneEndpoint(t *testing.T) {
	h, nodes := affinityPool(t, nil, nil)
	taker, other := sendTx(t, h, nodes, 0)
	on := map[string]int{taker.name: 1}
	for nonce := 1; nonce < 12; nonce++ {
		r := h.call(nonce, "eth_sendRawTransaction", rawTx(nonce))
		mustOK(t, r)
		on[r.endpoint]++
	}
	t.Logf("12 consecutive writes: %v; pending nonce %s %d, %s %d", on, taker.name, taker.pendingNonce(), other.name, other.pendingNonce())
	if on[taker.name] != 12 || taker.pendingNonce() != 12 {
		t.Fatalf("writes spread %v: want all 12 on %s, the first one's", on, taker.name)
	}
}

// Past router.write_affinity the reads of the pending state route by score
// (and hedge) again, and the status no longer shows the affinity.
func TestWriteAffinity_EndsWithItsWindow(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	h, nodes := affinityPool(t, clock, nil)
	taker, other := sendTx(t, h, nodes, 0)
	taker.readDelay.Store(int64(slowRead))

	st := h.status().WriteAffinity
	if want := testutil.Epoch.Add(30 * time.Second); st == nil || st.Endpoint != taker.name || !st.Until.Equal(want) {
		t.Fatalf("status write_affinity %+v, want %s until %s", st, taker.name, want)
	}
	clock.Advance(30*time.Second - time.Millisecond)
	if fresh, _, duplicated := pendingReads(t, h, taker, 1, 5); fresh != 5 || duplicated != 0 {
		t.Fatalf("within the window: %d of 5 pending reads answered by %s, %d hedged", fresh, taker.name, duplicated)
	}
	clock.Advance(time.Millisecond)
	fresh, stale, _ := pendingReads(t, h, taker, 1, 10)
	t.Logf("past the window: %d of 10 pending reads answered by %s, %d by %s (stale)", fresh, taker.name, stale, other.name)
	if stale != 10 {
		t.Fatalf("past the window %d of 10 pending reads still answered by the slower %s: want them routed by score and hedged", fresh, taker.name)
	}
	if st := h.status().WriteAffinity; st != nil {
		t.Fatalf("status write_affinity %+v past its window, want none", st)
	}
}

// An endpoint that cannot take the request keeps the normal order: the
// affinity costs no client an error.
func TestWriteAffinity_UnroutableEndpointKeepsTheNormalOrder(t *testing.T) {
	t.Run("drained", func(t *testing.T) {
		h, nodes := affinityPool(t, nil, nil)
		taker, other := sendTx(t, h, nodes, 0)
		h.mustDo(h.mustRequest("POST", "/v1/endpoints/"+taker.name+"/drain", ""))
		if _, stale, _ := pendingReads(t, h, taker, 1, 5); stale != 5 {
			t.Fatalf("%d of 5 pending reads answered by %s, drained", 5-stale, other.name)
		}
		r := h.call(2, "eth_sendRawTransaction", rawTx(1))
		mustOK(t, r)
		if r.endpoint != other.name {
			t.Fatalf("a write answered by %s while %s is drained", r.endpoint, taker.name)
		}
	})
	t.Run("breaker open", func(t *testing.T) {
		h, nodes := affinityPool(t, nil, nil)
		taker, other := sendTx(t, h, nodes, 0)
		h.mustDo(h.mustRequest("POST", "/v1/endpoints/"+taker.name+"/fault", `{"mode":"error"}`))
		for i := 0; h.endpoint(taker.name).Breaker.State != engine.BreakerOpen; i++ {
			if i == 10 {
				t.Fatalf("%s's breaker did not open: %+v", taker.name, h.endpoint(taker.name).Breaker)
			}
			mustOK(t, h.call(100+i, "eth_getTransactionCount", addr, "pending"))
		}
		r := h.call(2, "eth_sendRawTransaction", rawTx(1))
		mustOK(t, r)
		if r.endpoint != other.name || r.attempts != 1 {
			t.Fatalf("a write answered by %s after %d attempts while %s's breaker is open", r.endpoint, r.attempts, taker.name)
		}
	})
}

// router.write_affinity = "0s" turns it off: reads route by score.
func TestWriteAffinity_OffWithZeroWindow(t *testing.T) {
	h, nodes := affinityPool(t, nil, func(c *engine.Config) { c.Router.WriteAffinity = 0 })
	taker, other := sendTx(t, h, nodes, 0)
	// Four times the others' slowRead: the other's answer must lose to a
	// hedge sent 5 ms later, which a load average of 5 once did at 80 ms.
	taker.readDelay.Store(int64(4 * slowRead))
	warmUp(t, h)
	if _, stale, _ := pendingReads(t, h, taker, 1, 10); stale != 10 {
		t.Fatalf("write_affinity 0s: %d of 10 pending reads answered by the slower %s, want none", 10-stale, taker.name)
	}
	if st := h.status().WriteAffinity; st != nil {
		t.Fatalf("write_affinity 0s: status shows %+v", st)
	}
	t.Logf("write_affinity 0s: 10 of 10 pending reads answered by %s, as routing by score does", other.name)
}

// Solana: the status of the signatures writes answered is asked of the
// endpoint that took them, when every one asked was taken by it.
func TestWriteAffinity_SolanaSignatureStatuses(t *testing.T) {
	t.Parallel()
	h, nodes := affinityPool(t, nil, func(c *engine.Config) { c.Chain.Kind = "solana" })
	var sigs []string
	var taker *mempoolNode
	for nonce := range 2 {
		r := h.call(nonce, "sendTransaction", rawTx(nonce))
		mustOK(t, r)
		var sig string
		json.Unmarshal(resultOf(t, r), &sig)
		sigs = append(sigs, sig)
		taker = nodes[r.endpoint]
	}
	taker.readDelay.Store(int64(slowRead))
	for i := range 30 {
		mustOK(t, h.call(i, "getBalance", "11111111111111111111111111111111"))
	}
	found := 0
	for i := range 10 {
		r := h.call(100+i, "getSignatureStatuses", sigs)
		var res struct{ Value []any }
		json.Unmarshal(resultOf(t, r), &res)
		if r.endpoint == taker.name && !r.hedged && len(res.Value) == 2 && res.Value[0] != nil && res.Value[1] != nil {
			found++
		}
	}
	if found != 10 {
		t.Fatalf("%d of 10 getSignatureStatuses of the two signatures answered by %s, which took them", found, taker.name)
	}
	r := h.call(4, "getSignatureStatuses", []string{sigs[0], "UnknownSig"})
	if r.endpoint == taker.name && !r.hedged {
		t.Errorf("a list naming a signature no write answered went to %s unhedged: want the normal order", taker.name)
	}
}

// ethers batches the calls of one tick: a bot's transactions and the
// pending nonce read beside them. A node runs a batch one call after
// another; rpcdash ran every element at once: the writes went to both
// nodes (a nonce gap on each) and the pending read, answered before the
// writes landed, gave the old nonce. Now the later writes follow the
// first to its endpoint, and a read that must see them (pending state, a
// transaction lookup) starts after them; a read of anything else does not
// wait.
func TestWriteAffinity_BatchKeepsTheOrderItsWritesNeed(t *testing.T) {
	h, nodes := affinityPool(t, nil, func(c *engine.Config) { c.Hedge.Enabled = false })
	const writeTime = 60 * time.Millisecond
	for _, n := range nodes {
		n.writeDelay.Store(int64(writeTime))
	}
	var calls []string
	for nonce := range 3 {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_sendRawTransaction","params":["%s"]}`, nonce, rawTx(nonce)))
	}
	calls = append(calls,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"eth_getTransactionCount","params":["%s","pending"]}`, addr),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"eth_getTransactionByHash","params":["%s"]}`, txHash(rawTx(2))),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"eth_getBalance","params":["%s","latest"]}`, addr))
	r := h.post("[" + strings.Join(calls, ",") + "]")
	answers := batchAnswers(t, r, 6)
	var nonce string
	json.Unmarshal(answers[3].Result, &nonce)
	ids := strings.Split(r.id, ",")
	startOf := func(i int) float64 { return h.settledTrace(ids[i]).Attempts[0].StartMS }
	t.Logf("batch of 3 writes (%v each), a pending nonce read, a lookup, a balance read: a took %v, b %v; pending nonce %s; lookup %s; "+
		"first attempts started at %.0f, %.0f, %.0f, %.0f, %.0f, %.0f ms",
		writeTime, nodes["a"].takenNonces(), nodes["b"].takenNonces(), nonce, answers[4].Result, startOf(0), startOf(1), startOf(2), startOf(3), startOf(4), startOf(5))
	if a, b := len(nodes["a"].takenNonces()), len(nodes["b"].takenNonces()); a != 3 && b != 3 {
		t.Fatalf("the writes were split: a took %d, b %d; want all three on one", a, b)
	}
	if nonce != "0x3" || string(answers[4].Result) == "null" {
		t.Fatalf("pending nonce %s, lookup %s: want 0x3 and the transaction, as the node answers when it runs the batch in order", nonce, answers[4].Result)
	}
	writesEnd := 2 * float64(writeTime/time.Millisecond)
	if startOf(3) < writesEnd || startOf(4) < writesEnd {
		t.Fatalf("the pending read and the lookup started at %.0f and %.0f ms: want after the writes, at least %.0f ms", startOf(3), startOf(4), writesEnd)
	}
	if startOf(5) >= float64(writeTime/time.Millisecond) {
		t.Fatalf("the balance read started at %.0f ms: it waited for a write it does not read", startOf(5))
	}
}

// A node runs a batch of writes in microseconds each; through rpcdash
// each is a round trip to the provider, so they must not run one after
// another: 200 writes of 20 ms each would take 4 s (and 1000 past
// server.request_timeout). The writes after the first run at once.
func TestWriteAffinity_BatchOfManyWritesRunsAtOnceAfterTheFirst(t *testing.T) {
	h, nodes := affinityPool(t, nil, func(c *engine.Config) { c.Hedge.Enabled = false })
	const n, writeTime = 200, 20 * time.Millisecond
	for _, node := range nodes {
		node.writeDelay.Store(int64(writeTime))
	}
	var calls []string
	for nonce := range n {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_sendRawTransaction","params":["%s"]}`, nonce, rawTx(nonce)))
	}
	r := h.post("[" + strings.Join(calls, ",") + "]")
	batchAnswers(t, r, n)
	ids := strings.Split(r.id, ",")
	last := h.settledTrace(ids[n-1]).Attempts[0].StartMS
	oneByOne := float64(n-1) * float64(writeTime/time.Millisecond)
	t.Logf("%d writes of %v: the last started at %.0f ms (one after another: %.0f ms); a took %d, b %d",
		n, writeTime, last, oneByOne, len(nodes["a"].takenNonces()), len(nodes["b"].takenNonces()))
	// Half the one-after-another time: at once they start within a few
	// rounds of the batch's calls in flight (measured 150-400 ms idle, up to
	// 1.4 s under -race on a loaded 2-core machine); one after another is
	// 3980 ms at the least, longer on a loaded machine.
	if last > oneByOne/2 {
		t.Fatalf("the last of %d writes started at %.0f ms: they ran one after another (%.0f ms)", n, last, oneByOne)
	}
	if a, b := len(nodes["a"].takenNonces()), len(nodes["b"].takenNonces()); a != n && b != n {
		t.Fatalf("the writes were split: a took %d, b %d; want all on the first one's endpoint", a, b)
	}
}

type batchAnswer struct {
	ID     int
	Result json.RawMessage
	Error  *struct{ Message string }
}

// batchAnswers decodes a batch's n answers, failing on any error answer.
func batchAnswers(t *testing.T, r reply, n int) []batchAnswer {
	t.Helper()
	var answers []batchAnswer
	if err := json.Unmarshal(r.body, &answers); err != nil || len(answers) != n {
		t.Fatalf("batch answer (%d bytes, want %d answers): %v", len(r.body), n, err)
	}
	for _, a := range answers {
		if a.Error != nil {
			t.Fatalf("element %d: error %s", a.ID, a.Error.Message)
		}
	}
	return answers
}

// Methods in no table are sent once, like writes, but set no affinity: a
// batch of them (an L2's own reads, which rpcdash does not know) waits for
// none of them.
func TestWriteAffinity_BatchOfUnknownMethodsWaitsForNone(t *testing.T) {
	h, nodes := affinityPool(t, nil, func(c *engine.Config) { c.Hedge.Enabled = false })
	for _, n := range nodes {
		n.readDelay.Store(int64(60 * time.Millisecond))
	}
	var calls []string
	for i := range 4 {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"zks_getL1BatchNumber","params":[]}`, i))
	}
	r := h.post("[" + strings.Join(calls, ",") + "]")
	var starts []float64
	for _, id := range strings.Split(r.id, ",") {
		starts = append(starts, h.settledTrace(id).Attempts[0].StartMS)
	}
	t.Logf("4 calls of a method in no table: first attempts started at %v ms", starts)
	if slices.Max(starts) >= 60 {
		t.Fatalf("first attempts started at %v ms: a call waited for another", starts)
	}
}
