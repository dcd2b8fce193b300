package engine

// A request's own deadline: server.request_timeout, or longer for the
// reads that take seconds by nature and the writes that wait for their
// receipt.

import (
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// requestTimeout is the deadline of a request for method: methods.timeouts,
// else jsonrpc.LongReadTimeout for a long read and
// jsonrpc.ReceiptWaitTimeout for a write that waits for its receipt (never
// shorter than server.request_timeout), else server.request_timeout.
func (e *Engine) requestTimeout(method string) time.Duration {
	d, _ := e.requestTimeoutOf(method)
	return d
}

func (e *Engine) requestTimeoutOf(method string) (time.Duration, int) {
	return methodRequestTimeout(e.methods, method, e.cfg.Server.RequestTimeout)
}

// methodRequestTimeout is requestTimeout under table and the general
// deadline, for the engine and for config validation alike.
func methodRequestTimeout(table *jsonrpc.MethodTable, method string, general time.Duration) (time.Duration, int) {
	if !isMethodName(method) { // counted as otherMethod: the general deadline
		return general, jsonrpc.TimeoutGeneral
	}
	d, source := table.RequestTimeout(method)
	switch source {
	case jsonrpc.TimeoutConfigured:
		return d, source
	case jsonrpc.TimeoutLongRead, jsonrpc.TimeoutReceiptWait:
		return max(d, general), source
	}
	return general, source
}

// bodyTimeout is the deadline of a whole body: the longest of its calls'.
func (e *Engine) bodyTimeout(els []jsonrpc.Element) time.Duration {
	d := time.Duration(0)
	for i, el := range els {
		if el.Req == nil || i > 0 && els[i-1].Req != nil && els[i-1].Req.Method == el.Req.Method {
			continue // the one before had its method: a batch's calls come in runs of one
		}
		d = max(d, e.requestTimeout(el.Req.Method))
	}
	if d == 0 {
		return e.cfg.Server.RequestTimeout
	}
	return d
}

// timedOutWords is the client's error for a request for method its
// deadline ended: "request timed out: no answer within <timeoutWords>".
func (e *Engine) timedOutWords(method string) string {
	return "request timed out: no answer within " + e.timeoutWords(method)
}

// timeoutWords names the deadline a request for method ran out of and the
// key that sets it, for the client's error.
func (e *Engine) timeoutWords(method string) string {
	d, source := e.requestTimeoutOf(method)
	switch source {
	case jsonrpc.TimeoutConfigured:
		return fmt.Sprintf("methods.timeouts.%s %s", jsonrpc.Lower(method), d)
	case jsonrpc.TimeoutLongRead:
		return fmt.Sprintf("%s, the built-in deadline of long reads (methods.timeouts sets another)", d)
	case jsonrpc.TimeoutReceiptWait:
		return fmt.Sprintf("%s, the built-in deadline of writes that wait for their receipt (methods.timeouts sets another)", d)
	}
	return "server.request_timeout " + d.String()
}
