package engine_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// An answer that starts with a UTF-8 byte order mark is an answer: fetch's
// res.json() and most clients drop the mark, and rpcdash called it "not
// JSON-RPC". It is relayed without the mark, single or batched.
func TestAnswers_LeadingByteOrderMarkIsDropped(t *testing.T) {
	bom := []byte("\xEF\xBB\xBF")
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body json.RawMessage
		if json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var calls []struct{ ID json.RawMessage }
		batch := body[0] == '['
		if batch {
			json.Unmarshal(body, &calls)
		} else {
			calls = make([]struct{ ID json.RawMessage }, 1)
			json.Unmarshal(body, &calls[0])
		}
		answers := make([]json.RawMessage, len(calls))
		for i, c := range calls {
			answers[i] = json.RawMessage(`{"jsonrpc":"2.0","id":` + string(c.ID) + `,"result":"0x1"}`)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(bom)
		if batch {
			json.NewEncoder(w).Encode(answers)
		} else {
			w.Write(answers[0])
		}
	}))
	defer node.Close()
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "node", URL: node.URL}}
	})
	r := h.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if !json.Valid(r.body) || bytes.HasPrefix(r.body, bom) {
		t.Fatalf("relayed %q; want the answer without its byte order mark", r.body)
	}
	b := h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + addr + `","latest"]},` +
		`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["` + addr + `","latest"]}]`)
	var answers []struct{ Result string }
	if err := json.Unmarshal(b.body, &answers); err != nil || len(answers) != 2 || answers[0].Result != "0x1" || answers[1].Result != "0x1" {
		t.Fatalf("batch answered %q", b.body)
	}
	if ep := h.endpoint("node"); ep.Rates.Failures != 0 {
		t.Fatalf("node charged with %d failures (%s)", ep.Rates.Failures, ep.LastError)
	}
}
