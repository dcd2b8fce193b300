package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rpcdash/rpcdash/engine"
)

// statusFrom reads body, the answer of base's GET /v1/status, as a
// Snapshot; an answer that is not an rpcdash status is an error naming
// base. A web server's page or another API's JSON on the port was printed
// as an rpcdash with no endpoints (exit 0), or, with --format json,
// relayed as if it were the status.
func statusFrom(base string, body []byte) (engine.Snapshot, error) {
	var s engine.Snapshot
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return s, notOurStatus(base, "not a JSON object")
	}
	if isHealthAnswer(fields) {
		return s, notOurStatus(base, healthAnswerWhy)
	}
	// Every rpcdash's status lists its endpoints (a config has one at
	// least); older versions' too, which lack some of today's fields.
	if eps := bytes.TrimSpace(fields["endpoints"]); len(eps) == 0 || eps[0] != '[' {
		return s, notOurStatus(base, `no "endpoints" list`)
	}
	if err := json.Unmarshal(body, &s); err != nil {
		return s, notOurStatus(base, err.Error())
	}
	return s, nil
}

// healthAnswerWhy says what a JSON-RPC port's health answer at --admin is.
const healthAnswerWhy = "it is an rpcdash JSON-RPC port's health answer: the admin API is on server.admin, 127.0.0.1:8546 by default"

func notOurStatus(base, why string) error {
	return fmt.Errorf("no rpcdash admin API at %s: its /v1/status answer is not an rpcdash status (%s)", engine.ShownURL(base), why)
}

// isHealthAnswer tells the JSON-RPC port's answer to a GET (its pool's
// health: 200, or 503 with nothing routable) from a status: --admin
// 127.0.0.1:8545 for 8546.
func isHealthAnswer(fields map[string]json.RawMessage) bool {
	return fields["ok"] != nil && fields["routable"] != nil && fields["started"] == nil
}

// healthAnswerError is the error for an answer other than 200 that is the
// JSON-RPC port's health (its 503 with nothing routable), nil for any
// other: an rpcdash admin API's own 503 past server.max_conns is a
// JSON-RPC error, and keeps its text.
func healthAnswerError(base string, ae *engine.AdminError) error {
	var fields map[string]json.RawMessage
	if ae.FromAPI || json.Unmarshal([]byte(ae.Text), &fields) != nil || !isHealthAnswer(fields) {
		return nil
	}
	return notOurStatus(base, healthAnswerWhy)
}
