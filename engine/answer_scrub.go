package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// answerBody is the endpoint answer res relays to its client, an error
// answer's text scrubbed of the endpoints' URL credentials: a provider
// refusing a key may quote the URL it was called at ("invalid project id
// /v3/KEY"), and a client of rpcdash must not learn the operator's key
// from it. A result is the client's data and is never touched.
func (e *Engine) answerBody(res result) []byte {
	body := res.body.Bytes()
	if !res.info.HasError {
		return body
	}
	if scrubbed, changed := jsonrpc.RewriteErrorText(body, e.scrub.Scrub); changed {
		return scrubbed
	}
	return body
}
