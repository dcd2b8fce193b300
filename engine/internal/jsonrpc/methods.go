package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Class is how a method may be routed.
type Class int

const (
	// ClassRead: idempotent; may be hedged and failed over.
	ClassRead Class = iota
	// ClassWrite: sent to one endpoint, never hedged or re-sent once it may
	// have left. Methods in no table get it too: a method rpcdash does not
	// know may have side effects (mev_sendBundle, a provider's own submit
	// call), and delivering it twice is worse than waiting.
	ClassWrite
	// ClassStateful: pinned to the endpoint holding the state.
	ClassStateful
)

func (c Class) String() string {
	switch c {
	case ClassRead:
		return "read"
	case ClassWrite:
		return "write"
	case ClassStateful:
		return "stateful"
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

var (
	evmWrites = []string{
		"eth_sendRawTransaction", "eth_sendTransaction", "eth_sendRawTransactionConditional",
		"eth_sendRawTransactionSync", "eth_sendBundle", "eth_sendPrivateTransaction",
		"eth_sendUserOperation", "personal_sendTransaction", "eth_submitWork", "eth_submitHashrate",
	}
	evmStateful = []string{
		"eth_newFilter", "eth_newBlockFilter", "eth_newPendingTransactionFilter",
		"eth_getFilterChanges", "eth_getFilterLogs", "eth_uninstallFilter",
		"eth_subscribe", "eth_unsubscribe",
	}
	solanaWrites = []string{"sendTransaction", "requestAirdrop", "sendBundle"}

	// The reads: the standard JSON-RPC reads of each chain, and the common
	// debug/trace/txpool ones for EVM. Anything else is sent once unless
	// methods.reads names it.
	evmReads = []string{
		"eth_blockNumber", "eth_call", "eth_chainId", "eth_estimateGas", "eth_createAccessList",
		"eth_feeHistory", "eth_gasPrice", "eth_maxPriorityFeePerGas", "eth_blobBaseFee",
		"eth_getBalance", "eth_getCode", "eth_getStorageAt", "eth_getProof", "eth_getTransactionCount",
		"eth_getAccount", "eth_simulateV1", "eth_fillTransaction", "eth_getLogs", "eth_syncing", "eth_protocolVersion",
		"eth_accounts", "eth_coinbase", "eth_mining", "eth_hashrate", "eth_getWork",
		"eth_getBlockByHash", "eth_getBlockByNumber", "eth_getBlockReceipts",
		"eth_getBlockTransactionCountByHash", "eth_getBlockTransactionCountByNumber",
		"eth_getHeaderByHash", "eth_getHeaderByNumber",
		"eth_getTransactionByHash", "eth_getTransactionReceipt", "eth_getRawTransactionByHash",
		"eth_getTransactionByBlockHashAndIndex", "eth_getTransactionByBlockNumberAndIndex",
		"eth_getRawTransactionByBlockHashAndIndex", "eth_getRawTransactionByBlockNumberAndIndex",
		"eth_getUncleByBlockHashAndIndex", "eth_getUncleByBlockNumberAndIndex",
		"eth_getUncleCountByBlockHash", "eth_getUncleCountByBlockNumber",
		"net_version", "net_listening", "net_peerCount", "web3_clientVersion", "web3_sha3", "rpc_modules",
		"debug_traceTransaction", "debug_traceCall", "debug_traceCallMany", "debug_traceBlockByNumber",
		"debug_traceBlockByHash", "debug_traceBlock", "debug_getRawHeader", "debug_getRawBlock",
		"debug_getRawReceipts", "debug_getRawTransaction", "debug_storageRangeAt", "debug_getBadBlocks",
		"trace_block", "trace_transaction", "trace_call", "trace_callMany", "trace_filter", "trace_get",
		"trace_replayTransaction", "trace_replayBlockTransactions", "trace_rawTransaction",
		"txpool_status", "txpool_content", "txpool_contentFrom", "txpool_inspect",
	}
	solanaReads = []string{
		"getAccountInfo", "getBalance", "getBlock", "getBlockCommitment", "getBlockHeight",
		"getBlockProduction", "getBlocks", "getBlocksWithLimit", "getBlockTime", "getClusterNodes",
		"getEpochInfo", "getEpochSchedule", "getFeeForMessage", "getFirstAvailableBlock",
		"getGenesisHash", "getHealth", "getHighestSnapshotSlot", "getIdentity", "getInflationGovernor",
		"getInflationRate", "getInflationReward", "getLargestAccounts", "getLatestBlockhash",
		"getLeaderSchedule", "getMaxRetransmitSlot", "getMaxShredInsertSlot",
		"getMinimumBalanceForRentExemption", "getMultipleAccounts", "getProgramAccounts",
		"getRecentPerformanceSamples", "getRecentPrioritizationFees", "getSignaturesForAddress",
		"getSignatureStatuses", "getSlot", "getSlotLeader", "getSlotLeaders", "getStakeActivation",
		"getStakeMinimumDelegation", "getSupply", "getTokenAccountBalance",
		"getTokenAccountsByDelegate", "getTokenAccountsByOwner", "getTokenLargestAccounts",
		"getTokenSupply", "getTransaction", "getTransactionCount", "getVersion", "getVoteAccounts",
		"isBlockhashValid", "minimumLedgerSlot", "simulateTransaction",
		// deprecated, still served by many nodes
		"getConfirmedBlock", "getConfirmedBlocks", "getConfirmedBlocksWithLimit",
		"getConfirmedSignaturesForAddress2", "getConfirmedTransaction", "getFeeCalculatorForBlockhash",
		"getFeeRateGovernor", "getFees", "getRecentBlockhash", "getSnapshotSlot",
	}

	evmFilterRoles = map[string]filterRole{
		"eth_newfilter":                   {creates: true, idParam: -1},
		"eth_newblockfilter":              {creates: true, idParam: -1},
		"eth_newpendingtransactionfilter": {creates: true, idParam: -1},
		"eth_getfilterchanges":            {idParam: 0},
		"eth_getfilterlogs":               {idParam: 0},
		"eth_uninstallfilter":             {idParam: 0},
		"eth_subscribe":                   {idParam: -1, unsupported: true},
		"eth_unsubscribe":                 {idParam: -1, unsupported: true},
	}
)

type filterRole struct {
	creates     bool
	idParam     int
	unsupported bool
}

// MethodLists extend the built-in tables (the config's methods section).
type MethodLists struct {
	Writes   []string
	Stateful []string
	Reads    []string
	NoHedge  []string
	// Weights are cost units per method (lower-cased keys), for the hedge
	// budget; they override the built-in ones (evmWeights), and a method
	// in neither weighs 1.
	Weights map[string]float64
	// Timeouts are request deadlines per method (lower-cased keys); they
	// override the built-in ones of long reads (longRead) and of writes
	// that wait for their receipt (evmReceiptWaits).
	Timeouts map[string]time.Duration
}

// MethodTable classifies methods of one chain kind. Lookups ignore ASCII
// case: a write spelled oddly must never be hedged just because its case
// differs. It is read-only after construction and safe for concurrent use.
type MethodTable struct {
	solana   bool
	classes  map[string]Class // lower-cased; methods not listed are sent once, like writes
	listed   map[string]bool  // the classes' methods as their lists spell them (Listed)
	noHedge  map[string]bool
	weights  map[string]float64
	timeouts map[string]time.Duration
	tips     map[string]tipRule
}

// NewMethodTable builds the table for kind ("evm" or "solana"; anything
// else gets the EVM tables). The lists in cfg classify methods the built-in
// tables do not know, and may make a built-in read more careful; a method
// listed in more than one of them takes the most conservative class (write,
// then stateful, then read). They never loosen a built-in write or stateful
// method: a write made a read would be hedged and sent twice, a filter
// method made a write would lose its pinning (config validation refuses
// both, naming the key; see ConfigClassProblem).
func NewMethodTable(kind string, cfg MethodLists) *MethodTable {
	t := &MethodTable{
		solana:   kind == "solana",
		classes:  map[string]Class{},
		listed:   map[string]bool{},
		noHedge:  map[string]bool{},
		weights:  map[string]float64{},
		timeouts: map[string]time.Duration{},
		tips:     evmTips,
	}
	lists := [][]string{evmReads, evmWrites, evmStateful}
	if t.solana {
		lists = [][]string{solanaReads, solanaWrites}
	}
	for _, l := range append(lists, cfg.Reads, cfg.Stateful, cfg.Writes) {
		for _, m := range l {
			t.listed[m] = true
		}
	}
	if t.solana {
		t.tips = solanaTips
		for _, m := range solanaReads {
			t.classes[Lower(m)] = ClassRead
		}
		for _, m := range solanaWrites {
			t.classes[Lower(m)] = ClassWrite
		}
	} else {
		for _, m := range evmReads {
			t.classes[Lower(m)] = ClassRead
		}
		for _, m := range evmWrites {
			t.classes[Lower(m)] = ClassWrite
		}
		for _, m := range evmStateful {
			t.classes[Lower(m)] = ClassStateful
		}
		for m, w := range evmWeights {
			t.weights[Lower(m)] = w
		}
	}
	override := map[string]Class{}
	for _, l := range []struct {
		methods []string
		class   Class
	}{{cfg.Reads, ClassRead}, {cfg.Stateful, ClassStateful}, {cfg.Writes, ClassWrite}} {
		for _, m := range l.methods {
			if c, ok := override[Lower(m)]; !ok || conservativeness(l.class) > conservativeness(c) {
				override[Lower(m)] = l.class
			}
		}
	}
	for m, c := range override {
		if builtin, ok := t.builtin(m); ok && builtin != ClassRead {
			continue
		}
		t.classes[m] = c
	}
	for _, m := range cfg.NoHedge {
		t.noHedge[Lower(m)] = true
	}
	for m, w := range cfg.Weights {
		t.weights[Lower(m)] = w
	}
	for m, d := range cfg.Timeouts {
		t.timeouts[Lower(m)] = d
	}
	return t
}

// ConfigClassProblem says why listing method under the config's list for
// class would be refused ("" when it may be): a built-in write or stateful
// method keeps its class.
func ConfigClassProblem(kind, method string, class Class) string {
	builtin, ok := NewMethodTable(kind, MethodLists{}).builtin(method)
	if !ok || builtin == class || builtin == ClassRead {
		return ""
	}
	switch builtin {
	case ClassWrite:
		return fmt.Sprintf("%s is a write: it is sent once and never hedged or re-sent, and cannot be made %s", method, className(class))
	default:
		return fmt.Sprintf("%s is stateful: it is pinned to the endpoint that holds its state, and cannot be made %s", method, className(class))
	}
}

// builtin is the class the built-in tables give method, before the config's
// lists are applied (Solana's *subscribe methods are stateful).
func (t *MethodTable) builtin(method string) (Class, bool) {
	if c, ok := LookupFold(t.classes, method); ok {
		return c, true
	}
	if t.solana && hasSuffixFold(method, "subscribe") {
		return ClassStateful, true
	}
	return 0, false
}

func className(c Class) string {
	switch c {
	case ClassWrite:
		return "a write"
	case ClassStateful:
		return "stateful"
	}
	return "a read"
}

func conservativeness(c Class) int {
	switch c {
	case ClassWrite:
		return 2
	case ClassStateful:
		return 1
	}
	return 0
}

// Class returns the method's class; a method in no table (built-in or
// config) is ClassWrite: sent once.
func (t *MethodTable) Class(method string) Class {
	if c, ok := LookupFold(t.classes, method); ok {
		return c
	}
	if t.solana && hasSuffixFold(method, "subscribe") {
		return ClassStateful
	}
	return ClassWrite
}

// InNoTable says whether method is in no table, built-in or config: it is
// a write only by default (Class), sent once.
func (t *MethodTable) InNoTable(method string) bool {
	_, listed := LookupFold(t.classes, method)
	return !listed && t.Class(method) == ClassWrite
}

// Listed says whether a class's list names method as it is spelt (the
// built-in tables, or the config's methods.reads, .writes, .stateful):
// the method is known to exist. Class and the other lookups ignore case;
// a node does not (geth answers ETH_GETBALANCE -32601).
func (t *MethodTable) Listed(method string) bool { return t.listed[method] }

// Hedgeable reports whether a duplicate of the method may be sent: reads
// not listed in no_hedge.
func (t *MethodTable) Hedgeable(method string) bool {
	if t.Class(method) != ClassRead {
		return false
	}
	_, no := LookupFold(t.noHedge, method)
	return !no
}

// WhyNotHedged says why a duplicate of the method is never sent, as a
// phrase ("is a write"), or "" when it may be hedged.
func (t *MethodTable) WhyNotHedged(method string) string {
	_, listed := LookupFold(t.classes, method)
	switch cls := t.Class(method); {
	case cls == ClassWrite && !listed:
		return "is in no method table, so it is sent once like a write (methods.reads makes it a read)"
	case cls == ClassWrite:
		return "is a write"
	case cls == ClassStateful:
		return "is stateful (pinned to the endpoint holding its state)"
	case !t.Hedgeable(method):
		return "is in methods.no_hedge"
	}
	return ""
}

// Weight is the method's cost in units for the hedge budget: the config's
// (methods.weights), else the built-in one (evmWeights), else 1.
func (t *MethodTable) Weight(method string) float64 {
	if w, ok := LookupFold(t.weights, method); ok {
		return w
	}
	if w, ok := t.prefixWeight(method); ok {
		return w
	}
	return 1
}

// FilterRole tells how a stateful method relates to server-side state:
// creates means the result is the id of new state (eth_newFilter …);
// idParam is the index of the params element holding a state id, or -1;
// unsupported is state HTTP cannot carry (subscriptions), which the engine
// refuses. Methods that are not stateful, and stateful methods added by
// config, have no role: (false, -1, false).
func (t *MethodTable) FilterRole(method string) (creates bool, idParam int, unsupported bool) {
	if t.Class(method) != ClassStateful {
		return false, -1, false
	}
	if t.solana {
		return false, -1, hasSuffixFold(method, "subscribe")
	}
	if r, ok := LookupFold(evmFilterRoles, method); ok {
		return r.creates, r.idParam, r.unsupported
	}
	return false, -1, false
}

// LookupFold looks up the ASCII-lower-cased key without allocating for
// method names of ordinary length.
func LookupFold[V any](m map[string]V, key string) (V, bool) {
	var buf [96]byte
	if len(key) > len(buf) {
		v, ok := m[Lower(key)]
		return v, ok
	}
	b := buf[:len(key)]
	for i := 0; i < len(key); i++ {
		b[i] = lowerByte(key[i])
	}
	v, ok := m[string(b)]
	return v, ok
}

func hasSuffixFold(s, suffix string) bool {
	if len(s) < len(suffix) {
		return false
	}
	s = s[len(s)-len(suffix):]
	for i := 0; i < len(s); i++ {
		if lowerByte(s[i]) != suffix[i] {
			return false
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Lower lower-cases ASCII letters only, matching LookupFold.
func Lower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// TipDependent reports whether a read's answer depends on the chain tip, so
// that an endpoint lagging behind the pool's head may answer it wrongly
// (older state, or null for something it has not seen yet):
//   - never: chain constants (eth_chainId, net_version, web3_clientVersion,
//     Solana getGenesisHash, getVersion, getHealth …);
//   - by block parameter (EVM methods taking a block tag): "latest",
//     "pending", "safe", "finalized", absent, null and block numbers are
//     tip-dependent; "earliest" and block hashes (a 32-byte hex string or
//     EIP-1898 {"blockHash":…}) are not. eth_getLogs looks at the filter's
//     blockHash, else its toBlock;
//   - always: everything else, including eth_blockNumber, fee methods,
//     lookups by transaction or block hash (a lagging node has not seen the
//     recent ones) and every Solana read whatever its commitment (a lagging
//     node's finalized slot lags too). Unknown methods are tip-dependent.
func (t *MethodTable) TipDependent(method string, params json.RawMessage) bool {
	return t.followsChain(method, params, blockTagTip, false)
}

// TipDependentValid is TipDependent of params known to be valid JSON: a
// parsed request's (ParseBody checked its whole body). They are not checked
// again, which was half the planning of a 1000-call batch's calls.
func (t *MethodTable) TipDependentValid(method string, params json.RawMessage) bool {
	return t.followsChain(method, params, blockTagTip, true)
}

// followsChain is what TipDependent and MovingBlock share: unknown methods
// and unparsable params follow the chain, constants do not, and a method
// taking a block follows it as tag says of that block (an eth_getLogs
// filter: not when it names a blockHash, else as tag says of its toBlock).
// valid: params are known to be valid JSON.
func (t *MethodTable) followsChain(method string, params json.RawMessage, tag func(block []byte) bool, valid bool) bool {
	kind, arg, known := t.tipArg(method, params, valid)
	switch {
	case !known:
		return true
	case kind == tipNever:
		return false
	case kind == tipLogs:
		return len(arg) == 0 || arg[0] != '{' || objectBlock(arg, `"toBlock"`, tag)
	case kind == tipBlock:
		return tag(arg)
	}
	return true
}

// tipArg looks up method's tip rule and, for a rule that reads a block
// parameter (tipBlock, tipLogs), returns that parameter. known is false for
// an unknown method or params that are not JSON (unless valid says they
// are): both are taken as following the tip.
func (t *MethodTable) tipArg(method string, params json.RawMessage, valid bool) (kind int8, arg []byte, known bool) {
	rule, ok := LookupFold(t.tips, method)
	if !ok {
		return tipAlways, nil, false
	}
	if rule.kind != tipBlock && rule.kind != tipLogs {
		return rule.kind, nil, true
	}
	p := TrimSpace(params)
	if len(p) > 0 && !valid && !Valid(p) {
		return rule.kind, nil, false
	}
	return rule.kind, paramAt(p, int(rule.idx)), true
}

type tipRule struct {
	kind int8
	idx  int8 // the block parameter's index, for tipBlock
}

const (
	tipAlways = iota
	tipNever
	tipBlock
	tipLogs
)

var (
	never = tipRule{kind: tipNever}

	evmTipSource = map[string]tipRule{
		"eth_chainId": never, "net_version": never, "net_listening": never, "net_peerCount": never,
		"web3_clientVersion": never, "web3_sha3": never, "eth_protocolVersion": never,
		"eth_accounts": never, "eth_coinbase": never, "eth_mining": never, "eth_hashrate": never,
		"rpc_modules": never,

		"eth_getBlockByNumber": block(0), "eth_getBlockTransactionCountByNumber": block(0),
		"eth_getUncleCountByBlockNumber": block(0), "eth_getTransactionByBlockNumberAndIndex": block(0),
		"eth_getUncleByBlockNumberAndIndex": block(0), "eth_getBlockReceipts": block(0),
		"eth_getHeaderByNumber": block(0), "debug_traceBlockByNumber": block(0),
		"trace_block": block(0), "trace_replayBlockTransactions": block(0),

		"eth_getBalance": block(1), "eth_getCode": block(1), "eth_getTransactionCount": block(1),
		"eth_call": block(1), "eth_estimateGas": block(1), "eth_createAccessList": block(1),
		"eth_feeHistory": block(1), "eth_simulateV1": block(1), "eth_getAccount": block(1),
		"debug_traceCall": block(1),

		"eth_getStorageAt": block(2), "eth_getProof": block(2), "trace_call": block(2),

		"eth_getLogs": {kind: tipLogs},
	}
	solanaTipSource = map[string]tipRule{
		"getGenesisHash": never, "getVersion": never, "getIdentity": never, "getHealth": never,
		"getEpochSchedule": never, "getInflationGovernor": never, "getClusterNodes": never,
		"getMinimumBalanceForRentExemption": never, "getFirstAvailableBlock": never,
		"getStakeMinimumDelegation": never,
	}
	evmTips    = foldKeys(evmTipSource)
	solanaTips = foldKeys(solanaTipSource)

	knownMethods = internTable()
)

func block(idx int8) tipRule { return tipRule{kind: tipBlock, idx: idx} }

func foldKeys[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[Lower(k)] = v
	}
	return out
}

func internTable() map[string]string {
	t := map[string]string{}
	for _, l := range [][]string{evmWrites, evmStateful, solanaWrites, evmReads, solanaReads} {
		for _, m := range l {
			t[m] = m
		}
	}
	for _, src := range []map[string]tipRule{evmTipSource, solanaTipSource} {
		for m := range src {
			t[m] = m
		}
	}
	return t
}

func paramAt(params []byte, idx int) []byte {
	if len(params) == 0 || params[0] != '[' {
		return nil
	}
	k := 0
	for it := (arrayIter{b: params, i: 1}); it.next(); k++ {
		if k == idx {
			return params[it.vs:it.ve]
		}
	}
	return nil
}

// blockTagTip says whether a read at block tag v (nil: absent) follows the
// tip. "safe" and "finalized" do, as "latest" does: a node derives them
// from its own chain, so one N blocks behind the pool's head has them
// about N behind the pool's (a lagging Solana node's finalized slot lags
// the same way), and a state read at them carries no block number the
// finality floor could check. The bound is chain.max_head_lag, as for
// "latest", not a wider one: the gap is the head's lag, the one staleness
// the operator allows and lag exclusion measures; a wider bound would let
// an endpoint answer a finalized read from further back than any latest
// one. "earliest" and a block hash name one block for good.
func blockTagTip(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case '"':
		s, _ := decodeString(v)
		if s == "earliest" {
			return false
		}
		return !(len(s) == 66 && (s[:2] == "0x" || s[:2] == "0X"))
	case '{':
		return objectBlock(v, `"blockNumber"`, blockTagTip)
	}
	return true
}

// objectBlock: an object naming a blockHash is pinned to that block
// (false); else its numberKey member decides, as tag says of a block tag.
func objectBlock(obj []byte, numberKey string, tag func([]byte) bool) bool {
	var num []byte
	for it := (memberIter{b: obj, i: 1}); it.next(); {
		switch string(obj[it.ks:it.ke]) {
		case `"blockHash"`:
			return false
		case numberKey:
			num = obj[it.vs:it.ve]
		}
	}
	return tag(num)
}
