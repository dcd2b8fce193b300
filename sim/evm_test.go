package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHead_LagIsExactDifference(t *testing.T) {
	clock := newManualClock()
	a := start(t, Config{Clock: clock.Now})
	b := start(t, Config{Clock: clock.Now, HeadLag: 7})
	c := newClient(t)
	var ha, hb string
	result(t, c, a, &ha, "eth_blockNumber")
	result(t, c, b, &hb, "eth_blockNumber")
	na, _ := parseHexQuantity(ha)
	nb, _ := parseHexQuantity(hb)
	if na-nb != 7 || a.Head()-b.Head() != 7 || na != a.Head() {
		t.Fatalf("heads %d and %d (Head %d, %d), want a difference of 7", na, nb, a.Head(), b.Head())
	}
}

func TestHead_SharedAcrossUpstreamsWithRealClock(t *testing.T) {
	a, b := New(Config{}), New(Config{HeadLag: 3})
	// Retry only when a block boundary fell between the reads.
	for range 100 {
		before, hb, after := a.Head(), b.Head(), a.Head()
		if before == after {
			if before-hb != 3 {
				t.Fatalf("heads %d and %d, want a difference of 3", before, hb)
			}
			return
		}
	}
	t.Fatal("head never stable across three reads")
}

func TestHead_AdvancesFreezesAndResumes(t *testing.T) {
	clock := newManualClock()
	u := New(Config{Clock: clock.Now, BlockTime: 2 * time.Second, HeadLag: 1})
	h0 := u.Head()
	clock.Advance(6 * time.Second)
	if got := u.Head(); got != h0+3 {
		t.Fatalf("after 3 block times head %d, want %d", got, h0+3)
	}
	u.SetHeadFrozen(true)
	clock.Advance(10 * time.Second)
	if got := u.Head(); got != h0+3 {
		t.Fatalf("frozen head moved to %d", got)
	}
	u.SetHeadFrozen(false)
	if got := u.Head(); got != h0+8 {
		t.Fatalf("unfrozen head %d, want %d", got, h0+8)
	}
	u.SetHeadLag(5)
	if got := u.Head(); got != h0+4 {
		t.Fatalf("head with lag 5: %d, want %d", got, h0+4)
	}
}

// A bogus head: a fixed number whatever the chain does, or a fork's head
// running ahead of the chain; set through the control API as a test would.
func TestHead_FixedAndAheadControls(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Clock: clock.Now, BlockTime: time.Second})
	c := newClient(t)
	control := func(body string) {
		t.Helper()
		if status, _, b := post(t, c, u.URL()+"/_sim/mode", body); status != 200 {
			t.Fatalf("%s: %d %s", body, status, b)
		}
	}
	reported := func() int64 {
		t.Helper()
		var s string
		result(t, c, u, &s, "eth_blockNumber")
		n, err := parseHexQuantity(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	h0 := u.Head()
	control(`{"head_ahead":1000000}`)
	if got := reported(); got != h0+1000000 {
		t.Fatalf("head_ahead 1000000: reported %d, want %d", got, h0+1000000)
	}
	clock.Advance(3 * time.Second)
	if got := reported(); got != h0+1000003 {
		t.Fatalf("a head ahead must advance with the chain: %d, want %d", got, h0+1000003)
	}
	control(`{"head_fixed":9223372036854775807}`)
	clock.Advance(5 * time.Second)
	if got := reported(); got != 0x7fffffffffffffff {
		t.Fatalf("head_fixed: reported %d", got)
	}
	control(`{"head_fixed":0,"head_ahead":0}`)
	if got := reported(); got != h0+8 {
		t.Fatalf("back on the chain: %d, want %d", got, h0+8)
	}
	for _, bad := range []string{`{"head_fixed":-1}`, `{"head_ahead":-5}`} {
		if status, _, _ := post(t, c, u.URL()+"/_sim/mode", bad); status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", bad, status)
		}
	}
	if got := u.Head(); got != h0+8 {
		t.Fatalf("a rejected control changed the head to %d", got)
	}
}

func TestGetBlockByNumber_TagsAndLimits(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Clock: clock.Now})
	c := newClient(t)
	head := u.Head()
	block := func(tag string) map[string]any {
		var b map[string]any
		result(t, c, u, &b, "eth_getBlockByNumber", tag, false)
		return b
	}
	for tag, want := range map[string]int64{
		"latest": head, "pending": head, "finalized": head - 64, "safe": head - 32, "earliest": 0,
		fmt.Sprintf("0x%x", head-10): head - 10,
	} {
		b := block(tag)
		if b["number"] != hexUint(want) {
			t.Errorf("%s: number %v, want %s", tag, b["number"], hexUint(want))
		}
		if txs, ok := b["transactions"].([]any); !ok || len(txs) != 0 {
			t.Errorf("%s: transactions %v", tag, b["transactions"])
		}
	}
	if parent, child := block(hexUint(head-1)), block("latest"); child["parentHash"] != parent["hash"] {
		t.Errorf("parentHash %v, want %v", child["parentHash"], parent["hash"])
	}
	if r := call(t, c, u, "eth_getBlockByNumber", hexUint(head+1), false); r.Error != nil || string(r.Result) != "null" {
		t.Errorf("block above head: %+v", r)
	}
	if r := call(t, c, u, "eth_getBlockByNumber", "12", false); r.Error == nil || r.Error.Code != CodeInvalidParams {
		t.Errorf("decimal block number: %+v", r)
	}
}

func TestFilters_LiveOnlyWhereCreated(t *testing.T) {
	a, b := start(t, Config{}), start(t, Config{})
	c := newClient(t)
	var id, id2 string
	result(t, c, a, &id, "eth_newFilter", map[string]any{"fromBlock": "latest"})
	result(t, c, a, &id2, "eth_newBlockFilter")
	if id == id2 || !strings.HasPrefix(id, "0x") {
		t.Fatalf("filter ids %q %q", id, id2)
	}
	var changes []any
	result(t, c, a, &changes, "eth_getFilterChanges", id)
	if len(changes) != 0 {
		t.Fatalf("changes %v", changes)
	}
	result(t, c, a, &changes, "eth_getFilterLogs", id2)

	notFound := func(u *Upstream) {
		t.Helper()
		r := call(t, c, u, "eth_getFilterChanges", id)
		if r.Error == nil || r.Error.Code != CodeServerError || r.Error.Message != "filter not found" {
			t.Fatalf("unknown filter: %+v", r)
		}
	}
	notFound(b)
	var removed bool
	result(t, c, a, &removed, "eth_uninstallFilter", id)
	if !removed {
		t.Fatal("uninstall of a live filter answered false")
	}
	result(t, c, a, &removed, "eth_uninstallFilter", id)
	if removed {
		t.Fatal("second uninstall answered true")
	}
	notFound(a)
	if a.Filters() != 1 || b.Filters() != 0 {
		t.Fatalf("filters held: %d, %d", a.Filters(), b.Filters())
	}
}

func TestCall_RevertsOnDeadbeef(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	status, _, body := post(t, c, u.URL(), requestBody("eth_call", map[string]string{"to": "0x01", "data": "0xdeadbeef0001"}, "latest"))
	var r response
	if err := json.Unmarshal(body, &r); err != nil || status != http.StatusOK {
		t.Fatalf("status %d body %s", status, body)
	}
	if r.Error == nil || r.Error.Code != 3 || r.Error.Message != "execution reverted" {
		t.Fatalf("error %+v", r.Error)
	}
	if data, _ := r.Error.Data.(string); !strings.HasPrefix(data, "0x08c379a0") || len(data) != 10+3*64 {
		t.Fatalf("revert data %v", r.Error.Data)
	}

	other := start(t, Config{})
	var x, y string
	result(t, c, u, &x, "eth_call", map[string]string{"to": "0x01", "input": "0x1234"})
	result(t, c, other, &y, "eth_call", map[string]string{"to": "0x01", "input": "0x1234"})
	if x != y || len(x) != 66 {
		t.Fatalf("eth_call results %s and %s, want the same 32-byte word", x, y)
	}
}

func TestBalance_DeterministicAndRecorded(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	var x, y, z string
	result(t, c, u, &x, "eth_getBalance", "0xAbC")
	result(t, c, u, &y, "eth_getBalance", "0xabc", "0x10")
	result(t, c, u, &z, "eth_getBalance", "0xdef", "latest")
	if x != y || x == z || !strings.HasPrefix(x, "0x") {
		t.Fatalf("balances %s %s %s", x, y, z)
	}
	got := u.Requests("eth_getBalance")
	want := []string{`["0xAbC"]`, `["0xabc","0x10"]`, `["0xdef","latest"]`}
	if len(got) != len(want) {
		t.Fatalf("requests %s", got)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("request %d params %s, want %s", i, got[i], want[i])
		}
	}
}

func TestRequests_KeepsTheLast1000(t *testing.T) {
	u := start(t, Config{})
	var b strings.Builder
	b.WriteByte('[')
	for i := range 1005 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"method":"eth_getBalance","params":["0x%d"]}`, i, i)
	}
	b.WriteByte(']')
	post(t, newClient(t), u.URL(), b.String())
	got := u.Requests("eth_getBalance")
	if len(got) != 1000 || string(got[0]) != `["0x5"]` || string(got[999]) != `["0x1004"]` {
		t.Fatalf("%d params, first %s last %s", len(got), got[0], got[len(got)-1])
	}
	if u.Counters().Total != 1005 {
		t.Fatalf("total %d", u.Counters().Total)
	}
}

func TestSubmissions_RecordWritesInOrder(t *testing.T) {
	a, b := start(t, Config{}), start(t, Config{})
	c := newClient(t)
	var h1, h2, h3 string
	result(t, c, a, &h1, "eth_sendRawTransaction", "0xf86c01")
	result(t, c, a, &h2, "eth_sendTransaction", map[string]string{"from": "0x1", "to": "0x2"})
	result(t, c, b, &h3, "eth_sendRawTransaction", "0xf86c01")
	if h1 != h3 || h1 == h2 || len(h1) != 66 {
		t.Fatalf("tx hashes %s %s %s", h1, h2, h3)
	}
	call(t, c, a, "sendTransaction", "ignored-on-evm")
	got := a.Submissions()
	if len(got) != 2 || got[0] != "0xf86c01" || got[1] != `{"from":"0x1","to":"0x2"}` {
		t.Fatalf("submissions %q", got)
	}
}

func TestSubmissions_RecordedEvenWhenFailing(t *testing.T) {
	u := start(t, Config{})
	u.SetMode(ModeError)
	post(t, newClient(t), u.URL(), requestBody("eth_sendRawTransaction", "0x02"))
	if got := u.Submissions(); len(got) != 1 || got[0] != "0x02" {
		t.Fatalf("submissions %q", got)
	}
}

func TestFilters_SequentialIDsCollideAcrossUpstreams(t *testing.T) {
	a, b := start(t, Config{SequentialFilterIDs: true}), start(t, Config{SequentialFilterIDs: true})
	c := newClient(t)
	var a1, a2, b1 string
	result(t, c, a, &a1, "eth_newFilter", map[string]any{"fromBlock": "latest"})
	result(t, c, a, &a2, "eth_newBlockFilter")
	result(t, c, b, &b1, "eth_newFilter", map[string]any{"fromBlock": "latest"})
	if a1 != "0x1" || a2 != "0x2" || b1 != "0x1" {
		t.Fatalf("ids a: %s %s, b: %s; want 0x1 0x2, 0x1", a1, a2, b1)
	}
}

// One log per block of a numeric range, up to the upstream's head: a range
// past it has none, as a lagging node answers it.
func TestGetLogs_OneLogPerBlockUpToTheHead(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Clock: clock.Now})
	c := newClient(t)
	head := u.Head()
	count := func(filter map[string]any) int {
		var logs []map[string]any
		result(t, c, u, &logs, "eth_getLogs", filter)
		return len(logs)
	}
	for _, tc := range []struct {
		filter map[string]any
		want   int
	}{
		{map[string]any{"fromBlock": hexUint(head - 2), "toBlock": hexUint(head)}, 3},
		{map[string]any{"fromBlock": hexUint(head), "toBlock": hexUint(head + 1)}, 1},
		{map[string]any{"fromBlock": hexUint(head + 1), "toBlock": hexUint(head + 1)}, 0},
		{map[string]any{"fromBlock": hexUint(head - 2), "toBlock": "latest"}, 0},
	} {
		if got := count(tc.filter); got != tc.want {
			t.Errorf("%v (head %d): %d logs, want %d", tc.filter, head, got, tc.want)
		}
	}
}

// A block and a log carry every member a node gives them, those ethers'
// formatters require included (ethers' getBlock failed on the sim with
// BAD_DATA "invalid value for value.difficulty", getLogs with "invalid
// value for value.address", directly and through rpcdash alike), and the
// subscription methods are refused as geth refuses them over HTTP (ethers
// reads "does not exist" as UNSUPPORTED_OPERATION, geth's words as an
// unknown error: the sim answered otherwise than the node it stands for).
func TestEVM_AnswersHaveTheMembersClientsRequire(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Clock: clock.Now})
	c := newClient(t)
	var block map[string]any
	result(t, c, u, &block, "eth_getBlockByNumber", "latest", false)
	for _, k := range []string{"hash", "parentHash", "number", "timestamp", "nonce", "difficulty", "gasLimit", "gasUsed",
		"miner", "extraData", "baseFeePerGas", "stateRoot", "receiptsRoot", "transactionsRoot", "mixHash", "transactions"} {
		if _, ok := block[k]; !ok {
			t.Errorf("block without %s: %v", k, block)
		}
	}
	head := u.Head()
	var logs []map[string]any
	result(t, c, u, &logs, "eth_getLogs", map[string]any{"fromBlock": hexUint(head), "toBlock": hexUint(head)})
	if len(logs) != 1 {
		t.Fatalf("%d logs, want 1", len(logs))
	}
	for _, k := range []string{"address", "blockHash", "blockNumber", "data", "logIndex", "removed", "topics", "transactionHash", "transactionIndex"} {
		if _, ok := logs[0][k]; !ok {
			t.Errorf("log without %s: %v", k, logs[0])
		}
	}
	for method, want := range map[string]Error{
		"eth_subscribe":   {Code: CodeMethodNotFound, Message: "notifications not supported"},
		"eth_unsubscribe": {Code: CodeServerError, Message: "subscription not found"},
	} {
		r := call(t, c, u, method, "newHeads")
		if r.Error == nil || r.Error.Code != want.Code || r.Error.Message != want.Message {
			t.Errorf("%s: %+v, want %d %q", method, r.Error, want.Code, want.Message)
		}
	}
}

// A transaction a sim took is mined in the next block: its receipt is null
// until then (the transaction pending), and on a node behind until that
// node reaches the block, as on a chain (the sim answered null for ever: a client's wait for its
// receipt, ethers' tx.wait() or viem's waitForTransactionReceipt, never
// ended).
func TestEVM_ReceiptOnceTheNodeReachesItsBlock(t *testing.T) {
	clock := newManualClock()
	ahead := start(t, Config{Clock: clock.Now, BlockTime: time.Second})
	behind := start(t, Config{Clock: clock.Now, BlockTime: time.Second, HeadLag: 3})
	c := newClient(t)
	var hash string
	result(t, c, ahead, &hash, "eth_sendRawTransaction", "0x02f8"+hexUint(time.Now().UnixNano())[2:])
	receipt := func(u *Upstream) map[string]any {
		t.Helper()
		var r map[string]any
		result(t, c, u, &r, "eth_getTransactionReceipt", hash)
		return r
	}
	if r := receipt(ahead); r != nil {
		t.Fatalf("receipt before its block: %v", r)
	}
	var tx map[string]any
	if result(t, c, ahead, &tx, "eth_getTransactionByHash", hash); tx == nil || tx["hash"] != hash || tx["blockNumber"] != nil {
		t.Fatalf("transaction before its block: %v, want it pending", tx)
	}
	clock.Advance(time.Second)
	r := receipt(ahead)
	if r == nil || r["status"] != "0x1" || r["blockNumber"] != hexUint(ahead.Head()) || r["transactionHash"] != hash {
		t.Fatalf("receipt in the next block: %v (head %d)", r, ahead.Head())
	}
	if r := receipt(behind); r != nil {
		t.Fatalf("a node 3 blocks behind has the receipt: %v", r)
	}
	if result(t, c, ahead, &tx, "eth_getTransactionByHash", hash); tx["blockNumber"] != r["blockNumber"] {
		t.Fatalf("transaction in its block: %v, receipt %v", tx, r)
	}
	clock.Advance(3 * time.Second)
	if r := receipt(behind); r == nil || r["blockHash"] != ahead.evmBlockHash(ahead.Head()-3) {
		t.Fatalf("3 blocks later, the node behind: %v", r)
	}
}
