package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// An endpoint breaker.max_open_share holds closed says so in the NOTES of
// the table and the CSV, as the console's HELD CLOSED does. Seen live: one
// endpoint open, another answering HTML and held closed, `rpcdash status`
// printed it "closed" with ERR% 11.7 and nothing saying why a failing
// endpoint was still in the pool.
func TestStatus_AnEndpointHeldClosedSaysSoInItsNotes(t *testing.T) {
	eps := []engine.EndpointSnapshot{
		{Name: "a", Breaker: engine.BreakerSnapshot{State: engine.BreakerClosed, HeldClosed: true}, LastError: "answer is not JSON-RPC"},
		{Name: "b", Breaker: engine.BreakerSnapshot{State: engine.BreakerOpen}},
		{Name: "c", Breaker: engine.BreakerSnapshot{State: engine.BreakerClosed}},
	}
	const held = "held closed by breaker.max_open_share"
	var b bytes.Buffer
	printEndpointTable(&b, engine.Snapshot{Endpoints: eps}, 160)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if !strings.Contains(lines[1], held) {
		t.Errorf("a, held closed: its row does not say so:\n%s", b.String())
	}
	for _, l := range lines[2:4] {
		if strings.Contains(l, held) {
			t.Errorf("an endpoint not held closed says it is: %s", l)
		}
	}
	recs := endpointCSV(t, eps)
	if r := recs[1]; r[8] != "closed" || !strings.Contains(r[9], held) {
		t.Errorf("a in the CSV: STATE %q, NOTES %q; want closed, and the notes saying it is held", r[8], r[9])
	}
}
