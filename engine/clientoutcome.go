package engine

import (
	"context"
	"errors"
)

// clientOutcome is how a client request ended, as its figures count it.
// A request whose client went away before its answer (a client's own
// timeout, a load generator stopped) got no error of rpcdash's: counted
// as one, five reads abandoned by `curl --max-time 0.015` read `err 5
// 100%` in red on an idle, healthy pool.
type clientOutcome uint8

const (
	clientAnswered clientOutcome = iota // an answer, an endpoint's JSON-RPC error included
	clientFailed                        // rpcdash's own error
	clientGone                          // unanswered: its client went away first
)

// String is the outcome's label in rpcdash_request_duration_seconds.
func (o clientOutcome) String() string { return [...]string{"ok", "error", "gone"}[o] }

// ended counts a client request of c's that ended so.
func (c *counts) ended(out clientOutcome) {
	switch out {
	case clientAnswered:
		c.served.Add(1)
	case clientGone:
		c.clientGone.Add(1)
	default:
		c.clientErrors.Add(1)
	}
}

// outcomeOf is how a request that ran under ctx and ended with res ended.
// The server cancels a request's context when its client goes away, with
// no cause of rpcdash's own (shutdown, a batch too large) and before its
// deadline.
func outcomeOf(ctx context.Context, res result) clientOutcome {
	switch {
	case res.err == nil:
		return clientAnswered
	case errors.Is(ctx.Err(), context.Canceled) && context.Cause(ctx) == context.Canceled:
		return clientGone
	}
	return clientFailed
}
