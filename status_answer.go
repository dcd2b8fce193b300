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
	notOurs := func(why string) error {
		return fmt.Errorf("no rpcdash admin API at %s: its /v1/status answer is not an rpcdash status (%s)", engine.ShownURL(base), why)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return s, notOurs("not a JSON object")
	}
	if fields["ok"] != nil && fields["routable"] != nil && fields["started"] == nil {
		// GET on the JSON-RPC port answers its health: --admin 127.0.0.1:8545.
		return s, notOurs("it is an rpcdash JSON-RPC port's health answer: the admin API is on server.admin, 127.0.0.1:8546 by default")
	}
	// Every rpcdash's status lists its endpoints (a config has one at
	// least); older versions' too, which lack some of today's fields.
	if eps := bytes.TrimSpace(fields["endpoints"]); len(eps) == 0 || eps[0] != '[' {
		return s, notOurs(`no "endpoints" list`)
	}
	if err := json.Unmarshal(body, &s); err != nil {
		return s, notOurs(err.Error())
	}
	return s, nil
}
