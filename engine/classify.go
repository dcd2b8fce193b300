package engine

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// classify decides what an upstream's answer to req comes to, from its
// HTTP status and its body (read in full into r.body):
//   - 429, or 503 with a Retry-After, backs the method off on the endpoint
//     (backoff.go, asksBackOff); another 5xx is the endpoint's failure;
//   - an answer whose id is not the request's (another request's answer, a
//     batch to a single request) is the endpoint's failure, never relayed,
//     named by its HTTP status when that is not 2xx;
//   - any other non-2xx status is never relayed as a success: only the
//     request's own JSON-RPC error, said with a 4xx, is relayed, as the error
//     it is; the rest is the endpoint's failure;
//   - a JSON-RPC error is the request's (relayed, the endpoint is healthy),
//     the endpoint's, an endpoint that cannot serve this request, or a rate
//     limit, by the table in rpcerrors.go.
//
// A notification gets no answer, so any 2xx will do.
func (e *Engine) classify(r *upstreamReply, status int, retryAfter string, req *jsonrpc.Request) {
	switch {
	case asksBackOff(status, retryAfter):
		r.out, r.cause = outRateLimit, e.httpCause(status, jsonrpc.InspectResponse(r.body.Bytes()), r.body.Bytes())
		r.retryAfter = parseRetryAfter(retryAfter, e.now())
		return
	case status >= 500:
		r.out, r.cause = outHTTPError, e.httpCause(status, jsonrpc.InspectResponse(r.body.Bytes()), r.body.Bytes())
		return
	}
	success := status >= 200 && status < 300
	if success && req.IsNotification() {
		r.out = outAnswer
		return
	}
	body := r.body.Bytes()
	r.info = jsonrpc.InspectResponse(body)
	if !r.info.Valid {
		switch {
		case !success:
			r.out, r.cause = outHTTPError, e.httpCause(status, r.info, body)
		case len(jsonrpc.TrimSpace(body)) > 0 && jsonrpc.TrimSpace(body)[0] == '[':
			r.out, r.cause = outInvalid, "answer is a batch, to a single request"
		default:
			r.out, r.cause = outInvalid, "answer is not JSON-RPC"
		}
		return
	}
	b := jsonrpc.BlameRequest
	if r.info.HasError {
		b = jsonrpc.BlameOf(e.cfg.Chain.Kind == "solana", r.info.ErrCode, r.info.ErrMessage)
		if b == jsonrpc.BlameRequest && e.cfg.Chain.Kind == "evm" && jsonrpc.LogsFromBeyondTag(req.Method, req.Params, r.info.ErrMessage) {
			b = jsonrpc.BlameNotYet
		}
	}
	// Built only where it is kept: a revert, the commonest error answer,
	// is the request's and needs none.
	cause := func() string {
		if !r.info.HasError {
			return ""
		}
		return fmt.Sprintf("JSON-RPC error %d: %s", r.info.ErrCode, e.upstreamText(r.info.ErrMessage))
	}
	switch {
	case !jsonrpc.SameID(req.ID, jsonrpc.ResponseID(body)):
		switch {
		case refusedUnread(r.info, body):
			// The request's id, which this node cannot read and another
			// may (geth takes 1.5): tried elsewhere at no cost to its
			// breaker, as a method it does not serve; the last such
			// refusal is what the client gets.
			r.out, r.cause = outUnsupported, cause()
		case b == jsonrpc.BlameRateLimit:
			// Providers often answer a rate limit with a null id.
			r.out, r.cause = outRateLimit, cause()
		case !success:
			// A provider refusing the request (a bad key's 401 or 403)
			// often answers with a null id: its status and words say
			// what went wrong, as a direct client would read them.
			r.out, r.cause = outHTTPError, e.httpCause(status, r.info, body)
		case r.info.HasError && string(jsonrpc.ResponseID(body)) == "null":
			r.out, r.cause = outInvalid, "answer with a null id: "+cause()
		default:
			r.out, r.cause = outInvalid, "answer carries another request's id"
		}
	case !success && !(r.info.HasError && b == jsonrpc.BlameRequest):
		r.out, r.cause = outHTTPError, e.httpCause(status, r.info, body)
	case b == jsonrpc.BlameRequest:
		if why := unreadableHead(req, body, r.info); why != "" {
			r.out, r.cause = outInvalid, why
			return
		}
		r.out = outAnswer
		e.names.answered(req.Method, r.info)
	case b == jsonrpc.BlameEndpoint:
		r.out, r.cause = outEndpointError, cause()
	case b == jsonrpc.BlameNotYet:
		// The endpoint's until placeNotYet reads the block asked for.
		r.out, r.cause, r.notYet = outEndpointError, cause(), true
	case b == jsonrpc.BlameUnsupported:
		r.out, r.cause = outUnsupported, cause()
	default:
		r.out, r.cause = outRateLimit, cause()
	}
}

// refusedUnread says whether an answer is a parse error or an invalid
// request with a null id, as JSON-RPC 2.0 answers a request whose id it
// could not read ("If there was an error in detecting the id in the
// Request object (e.g. Parse error/Invalid Request), it MUST be Null"):
// a node built on
// jsonrpsee (reth) or jsonrpc-core (Solana) reads only whole, unsigned
// ids that fit 64 bits, and answers an id such as 1.5 or -1 so. It is the
// request's answer, not another request's: charged as one, a client's
// odd id opened breakers.
func refusedUnread(info jsonrpc.ResponseInfo, body []byte) bool {
	return info.HasError && (info.ErrCode == jsonrpc.CodeParseError || info.ErrCode == jsonrpc.CodeInvalidRequest) &&
		string(jsonrpc.ResponseID(body)) == "null"
}

// httpCause names a failed HTTP answer by its status and, when its body is
// a JSON-RPC error, by the provider's words, which say what a bare status
// does not ("HTTP 403: JSON-RPC error -32002: rejected due to project ID
// settings", "HTTP 429: … daily request count exceeded"): a client talking
// to the provider directly would have read them. Any other body is named
// by its words (statusWords): "HTTP 401: invalid project id".
func (e *Engine) httpCause(status int, info jsonrpc.ResponseInfo, body []byte) string {
	c := fmt.Sprintf("HTTP %d", status)
	if info.Valid && info.HasError {
		return c + fmt.Sprintf(": JSON-RPC error %d: %s", info.ErrCode, e.upstreamText(info.ErrMessage))
	}
	if w := statusWords(body); w != "" {
		c += ": " + e.upstreamText(w)
	}
	return c
}

// redirectCause names a redirect and where it points (scheme and host
// only: a provider's new URL carries the key as the old one did). rpcdash
// does not follow it: the endpoint's URL is the operator's to change, and
// its key would go wherever the redirect says.
func redirectCause(resp *http.Response) string {
	c := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if to, err := resp.Location(); err == nil {
		c += " redirect to " + redact.URL(to.String()) + ": redirects are not followed; set the endpoint's url to where it points"
	}
	return c
}

// refusedConn says whether a failed exchange is conclusive evidence that the
// endpoint is down, not slow or flaky: the connection was refused, or its
// host name does not exist.
func refusedConn(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) && dns.IsNotFound
}

// dialTimedOut says whether a failed exchange is a connection attempt that
// got no answer within the dial timeout: the endpoint, or the network to
// it, is silent.
func dialTimedOut(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && op.Timeout()
}
