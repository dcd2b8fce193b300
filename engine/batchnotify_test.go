package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// upstreamSeen sums the sims' counters since before: HTTP requests, and
// calls of each method.
func upstreamSeen(h *harness, before []sim.Counters) (http int64, calls map[string]int64) {
	calls = map[string]int64{}
	for i, u := range h.sims {
		c := u.Counters()
		http += c.HTTP - before[i].HTTP
		for m, n := range c.ByMethod {
			calls[m] += n - before[i].ByMethod[m]
		}
	}
	return http, calls
}

func simCounters(h *harness) []sim.Counters {
	var out []sim.Counters
	for _, u := range h.sims {
		out = append(out, u.Counters())
	}
	return out
}

// A batch's read notifications go upstream in a batch, as its calls do,
// and not one request each: 1000 eth_blockNumber notifications were 1014
// upstream requests, each hedged (0.25 s, against 0.02 s sent to the
// endpoint directly). They go as notifications, in an upstream batch of
// their own that is never hedged (an answer nobody reads is not worth a
// second request); the calls with ids get their answers, the
// notifications none, and a write sent as a notification is still sent
// once. A batch of notifications alone is answered HTTP 200 with no body,
// as before; a read notification alone is not hedged either.
func TestBatch_ReadNotificationsGoUpstreamInOneUnhedgedBatch(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = true
		c.Hedge.Delay = "1ms" // anything not answered at once is hedged
		c.Hedge.BudgetBurst = 1000
	}, sim.Config{Latency: fixed(20 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	const notifications = 100
	var els, notes []string
	for i := range notifications {
		notes = append(notes, fmt.Sprintf(`{"jsonrpc":"2.0","method":"eth_getBalance","params":["0x%040x","latest"]}`, i+1))
		els = append(els, notes[i])
		if i%40 == 0 {
			els = append(els, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getTransactionCount","params":["0x%040x","latest"]}`, i, i+1))
		}
	}
	els = append(els, `{"jsonrpc":"2.0","method":"eth_sendRawTransaction","params":["0x02f86b"]}`)

	before := simCounters(h)
	r := h.post("[" + strings.Join(els, ",") + "]")
	var answers []struct {
		ID     json.RawMessage
		Result *string
	}
	if err := json.Unmarshal(r.body, &answers); err != nil || r.status != 200 || len(answers) != 3 {
		t.Fatalf("HTTP %d, %d answers (%v): %.400s; want one for each of the 3 calls with an id", r.status, len(answers), err, r.body)
	}
	for k, a := range answers {
		if string(a.ID) != fmt.Sprint(k*40) || a.Result == nil {
			t.Errorf("answer %d: id %s, result %v; want id %d with a result", k, a.ID, a.Result, k*40)
		}
	}
	http, calls := upstreamSeen(h, before)
	if http > 4 {
		t.Errorf("%d upstream requests for the batch, want at most 4 (the calls' batch and its hedge, the notifications' batch, the write)", http)
	}
	if calls["eth_getBalance"] != notifications {
		t.Errorf("the %d read notifications were sent %d times in all, want once each (never hedged)", notifications, calls["eth_getBalance"])
	}
	if calls["eth_sendRawTransaction"] != 1 {
		t.Errorf("the write notification was sent %d times, want once", calls["eth_sendRawTransaction"])
	}

	before = simCounters(h)
	r = h.post("[" + strings.Join(notes, ",") + "]")
	if r.status != 200 || len(r.body) != 0 {
		t.Fatalf("a batch of notifications: HTTP %d %q, want 200 with no body", r.status, r.body)
	}
	if http, calls := upstreamSeen(h, before); http != 1 || calls["eth_getBalance"] != notifications {
		t.Errorf("a batch of %d notifications: %d upstream requests carrying %v, want one carrying each once", notifications, http, calls)
	}

	before = simCounters(h)
	if r := h.post(notes[0]); r.status != 200 || len(r.body) != 0 || r.hedged {
		t.Fatalf("a notification alone: HTTP %d %q, hedged %v; want 200 with no body, not hedged", r.status, r.body, r.hedged)
	}
	if http, _ := upstreamSeen(h, before); http != 1 {
		t.Errorf("a notification alone: %d upstream requests, want 1", http)
	}
}

// A node answers a batch's notifications nothing, and a batch of only
// notifications with an empty body (geth: HTTP 200, no body): that is the
// upstream batch of notifications answered, not a failure whose calls
// each run alone.
func TestBatch_NotificationsToANodeThatAnswersThemNothing(t *testing.T) {
	var batches, notes atomic.Int64
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		type call struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		answer := func(c call) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, c.ID)
		}
		var calls []call
		if json.Unmarshal(body, &calls) != nil {
			var one call
			json.Unmarshal(body, &one)
			if one.ID != nil {
				io.WriteString(w, answer(one))
			}
			return
		}
		batches.Add(1)
		var answers []string
		for _, c := range calls {
			if c.ID == nil {
				notes.Add(1)
				continue
			}
			answers = append(answers, answer(c))
		}
		if len(answers) > 0 {
			io.WriteString(w, "["+strings.Join(answers, ",")+"]")
		}
	}))
	t.Cleanup(node.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "node", URL: node.URL}}
	})
	els := []string{`{"jsonrpc":"2.0","id":"a","method":"eth_getBalance","params":["` + addr + `","latest"]}`}
	for range 50 {
		els = append(els, `{"jsonrpc":"2.0","method":"eth_getBalance","params":["`+addr+`","latest"]}`)
	}
	els = append(els, `{"jsonrpc":"2.0","id":"b","method":"eth_getBalance","params":["`+addr+`","latest"]}`)
	r := h.post("[" + strings.Join(els, ",") + "]")
	if want := `[{"jsonrpc":"2.0","id":"a","result":"0x1"},{"jsonrpc":"2.0","id":"b","result":"0x1"}]`; string(r.body) != want {
		t.Fatalf("HTTP %d %s, want %s", r.status, r.body, want)
	}
	if batches.Load() != 2 || notes.Load() != 50 {
		t.Errorf("%d upstream batches carrying %d notifications, want 2 (the calls', the notifications') carrying 50", batches.Load(), notes.Load())
	}
	if r.attempts != 52 {
		t.Errorf("%s %d, want 52: one attempt per element, none alone after its batch", engine.HeaderAttempts, r.attempts)
	}
}
