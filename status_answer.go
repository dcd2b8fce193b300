package main

import (
	"encoding/json"
	"fmt"

	"github.com/rpcdash/rpcdash/engine"
)

// statusKeys are fields every rpcdash's GET /v1/status holds: an answer
// without them is some other server's, which answered 200 at that port.
var statusKeys = []string{"started", "endpoints", "hedge"}

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
	for _, k := range statusKeys {
		if _, ok := fields[k]; !ok {
			return s, notOurs(fmt.Sprintf("no %q field", k))
		}
	}
	if err := json.Unmarshal(body, &s); err != nil {
		return s, notOurs(err.Error())
	}
	return s, nil
}
