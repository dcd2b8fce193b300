package engine

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A read of one block by number or hash (eth_getBlockByNumber(N),
// eth_getTransactionReceipt(h), eth_getLogs{toBlock: N}) is not a moving
// read, yet a shadow a block or two behind answers it with nothing (null,
// an empty list, "header not found") where the client got data: it has not
// seen that block yet. That is a tip outcome, not a mismatch, when the
// shadow's last known head is below the block asked for (the block named
// in the request, else the one the client's answer names), or when both
// the shadow's head and that block are within chain.max_head_lag of the
// pool head. Nothing for an older block stays a mismatch: the shadow says
// it has the block and does not.

// notThereYet says whether the shadow's empty answer is one of those.
func (e *Engine) notThereYet(ep *endpoint, job *mirrorJob, client, shadow answerParts) bool {
	if client.isErr || emptyResult(client.result) || !emptyAnswer(shadow) {
		return false
	}
	head, top, lag := ep.head.Load(), e.heads.top.Load(), e.cfg.Chain.MaxHeadLag
	if head == 0 || top == 0 {
		return false
	}
	block := e.askedBlock(job, client.result)
	if block > 0 && head < block {
		return true
	}
	return top-head <= lag && (block == 0 || top-block <= lag)
}

// askedBlock is the block a read names (its block number, an eth_getLogs
// toBlock) or else the one the client's answer is from (a receipt's or a
// transaction's blockNumber, a block's number); 0 when none says.
func (e *Engine) askedBlock(job *mirrorJob, result json.RawMessage) int64 {
	if e.cfg.Chain.Kind != "evm" {
		return 0
	}
	if n := jsonrpc.RequiredHead(job.req.Method, job.req.Params); n > 0 {
		return n
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil {
		return 0
	}
	for _, k := range []string{"blockNumber", "number"} {
		if n := jsonrpc.Quantity(obj[k]); n > 0 {
			return n
		}
	}
	return 0
}

// emptyResult: null or an empty list.
func emptyResult(r json.RawMessage) bool {
	r = bytes.TrimSpace(r)
	return string(r) == "null" || len(r) >= 2 && r[0] == '[' && len(bytes.TrimSpace(r[1:len(r)-1])) == 0
}

// notFoundWords are what nodes answer for a block they do not have yet.
var notFoundWords = []string{"not found", "unknown block", "beyond current head", "after last accepted block"}

// emptyAnswer: the shadow answered nothing (an empty result, or a JSON-RPC
// error saying it does not have the block).
func emptyAnswer(s answerParts) bool {
	if !s.isErr {
		return emptyResult(s.result)
	}
	msg := strings.ToLower(s.message)
	for _, w := range notFoundWords {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
