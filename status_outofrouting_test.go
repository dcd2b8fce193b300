package main

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// An endpoint out of routing for what the breaker's STATE does not say
// (its lag, another chain, an unhealthy node) says why in its NOTES, as
// the console's LAGGING, REJOIN k/N and EXCLUDED do. A lagging endpoint
// printed "closed" with its LAG and nothing saying that it took no read
// of the tip.
func TestStatus_AnEndpointOutOfRoutingSaysWhyInItsNotes(t *testing.T) {
	closed := engine.BreakerSnapshot{State: engine.BreakerClosed}
	s := engine.Snapshot{MaxLag: 5, Settings: engine.Settings{ProbeRecover: 3}, Endpoints: []engine.EndpointSnapshot{
		{Name: "behind", Role: engine.RolePrimary, Breaker: closed, Head: 100, Lag: 9, LagExcluded: true},
		{Name: "rejoining", Role: engine.RolePrimary, Breaker: closed, Head: 109, LagExcluded: true, LagInSync: 2, LagRecoverNeed: 6, LagFlaps: 1},
		{Name: "other", Role: engine.RolePrimary, Breaker: closed, Exclusions: []string{"wrong-chain: chain id 5, not 1"}},
		{Name: "fine", Role: engine.RolePrimary, Breaker: closed, Head: 109},
	}}
	want := map[string]string{
		"behind":    "lagging 9 behind, more than chain.max_head_lag 5: out of tip-dependent reads",
		"rejoining": "caught up, rejoining after 2 of 6 probes in sync",
		"other":     "excluded: wrong-chain: chain id 5, not 1",
	}
	var b bytes.Buffer
	printEndpointTable(&b, s, 200)
	var c bytes.Buffer
	if err := printEndpointCSV(&c, s); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n")[1:] {
		name := s.Endpoints[i].Name
		notes := recs[i+1][9]
		if w, ok := want[name]; ok {
			if !strings.Contains(line, w) || notes != "primary; "+w {
				t.Errorf("%s: row %q, CSV notes %q; want %q", name, line, notes, w)
			}
			continue
		}
		if notes != "primary" {
			t.Errorf("%s, in routing: CSV notes %q, want only its role", name, notes)
		}
	}
}
