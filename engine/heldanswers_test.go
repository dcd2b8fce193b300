package engine_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// bigAnswers is an upstream answering every call with a result of size
// bytes, its id echoed.
func bigAnswers(t *testing.T, size int) string {
	t.Helper()
	result := `"0x` + strings.Repeat("ab", (size-4)/2) + `"`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	}))
	t.Cleanup(up.Close)
	return up.URL
}

// bigAnswerHarness is an engine over bigAnswers alone (probes off, which
// its answers would fail), server.max_held_answer_bytes at 24 MiB.
func bigAnswerHarness(t *testing.T, size int, mut func(*engine.Config)) *harness {
	t.Helper()
	url := bigAnswers(t, size)
	return newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "big", URL: url}}
		c.Probes.Enabled = false
		c.Server.MaxHeldAnswerBytes = 24 << 20
		if mut != nil {
			mut(c)
		}
	})
}

// stalledClient sends an eth_call on a connection of its own and reads
// nothing of the answer until read is called.
type stalledClient struct {
	conn net.Conn
}

func newStalledClient(t *testing.T, rpc string) *stalledClient {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(rpc, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x00000000000000000000000000000000000000aa"},"latest"]}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return &stalledClient{conn: conn}
}

// read takes what the answer's connection gives until it ends or 10 s
// pass: its status and how many body bytes came.
func (c *stalledClient) read(t *testing.T) (status int, got int64) {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c.conn), nil)
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	got, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, got
}

func serverEvents(h *harness) []string {
	var out []string
	for _, ev := range h.events() {
		if ev.Type == engine.EventServer {
			out = append(out, ev.Message)
		}
	}
	return out
}

// answersCut sums the answers the server events say were cut.
func answersCut(events []string) int {
	sum := 0
	for _, ev := range events {
		var n int
		if _, err := fmt.Sscanf(ev, "cut %d ", &n); err == nil {
			sum += n
		}
	}
	return sum
}

// An answer whose client stopped reading is cut once the answers being
// handed over hold more than server.max_held_answer_bytes and the client
// has taken nothing for 2 s; a client reading the same answers meanwhile
// gets them whole. Before, a client that did not read held its answer
// for server.write_timeout (a minute here), however many did so.
func TestServer_AnswersToClientsThatStopReadingAreCutPastTheBound(t *testing.T) {
	const size = 16 << 20
	h := bigAnswerHarness(t, size, func(c *engine.Config) { c.Server.WriteTimeout = time.Minute })
	stalled := make([]*stalledClient, 3)
	for i := range stalled {
		stalled[i] = newStalledClient(t, h.rpc)
	}
	// A client that reads, while the stalled ones hold their answers.
	var wg sync.WaitGroup
	readerErrs := make(chan string, 3)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 3 {
			r := h.call(7, "eth_call", map[string]string{"to": "0x00000000000000000000000000000000000000aa"}, "latest")
			if r.status != 200 || len(r.body) < size {
				readerErrs <- fmt.Sprintf("HTTP %d, %d bytes", r.status, len(r.body))
			}
		}
	}()
	// Two of the three stalled answers must go for the third to fit the
	// bound; they may be cut in different passes, as each answer arrives.
	var events []string
	for deadline := time.Now().Add(20 * time.Second); answersCut(events) < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("%d answers cut 20 s after 3 clients of %d-byte answers stopped reading, bound %d; want 2 (events %q)", answersCut(events), size, 24<<20, events)
		}
		time.Sleep(50 * time.Millisecond)
		events = serverEvents(h)
	}
	wg.Wait()
	close(readerErrs)
	for e := range readerErrs {
		t.Errorf("the client that reads was cut or failed: %s", e)
	}
	if !strings.Contains(events[0], "server.max_held_answer_bytes (25165824 bytes)") || !strings.Contains(events[0], "read nothing of them for 2s") {
		t.Errorf("event %q; want it to name the bound and the stall", events[0])
	}
	cut := 0
	for _, c := range stalled {
		if _, got := c.read(t); got < size {
			cut++
		}
	}
	if cut < 2 {
		t.Errorf("%d of 3 stalled clients' answers cut; want at least 2 (events: %q)", cut, events)
	}
}

// Below the bound a client that stops reading keeps its answer: it gets
// it whole when it reads again.
func TestServer_AnAnswerNotReadBelowTheBoundIsKept(t *testing.T) {
	const size = 16 << 20
	h := bigAnswerHarness(t, size, nil)
	c := newStalledClient(t, h.rpc)
	time.Sleep(3 * time.Second) // past the 2 s a stalled client is allowed over the bound
	status, got := c.read(t)
	if status != 200 || got < size {
		t.Fatalf("HTTP %d, %d body bytes after 3 s unread; want 200 and the whole answer (%d)", status, got, size)
	}
	if evs := serverEvents(h); len(evs) > 0 {
		t.Errorf("events %q below the bound", evs)
	}
}
