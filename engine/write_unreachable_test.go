package engine_test

import (
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// blackHole is an https endpoint that takes connections and never answers
// them: the TLS handshake never ends, as at an address whose SYNs are
// dropped the dial never does. No request ever reaches it.
func blackHole(t *testing.T) string {
	t.Helper()
	return "https://" + testutil.ServeTCP(t, func(c net.Conn) {
		io.Copy(io.Discard, c) // held, never answered, until the test closes it
	})
}

// A write whose endpoint never gives it a connection was never sent. It
// waited out the dial's 5 s: past a 2 s request deadline it was lost, and
// its error said the endpoint "may have carried it out". Now it gives up
// on the endpoint at its connect bound (here half the deadline, 1 s) and
// is delivered once, elsewhere.
func TestWrite_AnEndpointThatNeverConnectsIsLeftUnsentAndTheWriteFailsOver(t *testing.T) {
	t.Parallel()
	hole := blackHole(t)
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = 2 * time.Second
		c.Endpoints[0].URL = hole
	}, sim.Config{}, sim.Config{Latency: fixed(5 * time.Millisecond)})
	writeLeavesS0AtItsConnectBound(t, h, `no connection within `+aboutASecond+` \(unreachable\): not sent`)
}

// aboutASecond is the 1 s connect bound as an error gives it: half the
// time the request has left at the dial, 999ms when it came a few
// milliseconds after the request began (a busy machine).
const aboutASecond = `(1s|9[5-9]\dms)`

// writeLeavesS0AtItsConnectBound sends a write that s0 never connects for
// (h's request deadline 2 s), and checks it left s0 unsent at its 1 s
// connect bound, s0's last error saying so (cause, a regular expression),
// and was delivered once, to s1.
func writeLeavesS0AtItsConnectBound(t *testing.T, h *harness, cause string) {
	t.Helper()
	w := h.call(1, "eth_sendRawTransaction", "0x01")
	mustOK(t, w)
	if w.endpoint != "s1" || w.attempts != 2 || len(h.sims[1].Submissions()) != 1 || len(h.sims[0].Submissions()) != 0 {
		t.Fatalf("write answered by %q after %d attempts; s0 got %d, s1 %d: want s1 after s0, once", w.endpoint, w.attempts,
			len(h.sims[0].Submissions()), len(h.sims[1].Submissions()))
	}
	if w.took < time.Second || w.took > 1800*time.Millisecond {
		t.Fatalf("write answered in %s; want it to leave s0 at its 1 s connect bound", w.took)
	}
	// The abandoned attempt records its cause as its dial ends, which may
	// come just after the client's answer (fresh-clone CI s65c-1: "").
	ep := h.endpoint("s0")
	for end := time.Now().Add(2 * time.Second); ep.LastError == "" && time.Now().Before(end); ep = h.endpoint("s0") {
		time.Sleep(10 * time.Millisecond)
	}
	if !regexp.MustCompile(cause).MatchString(ep.LastError) {
		t.Fatalf("s0's last error %q", ep.LastError)
	}
	t.Logf("write sent once, to s1, after %d attempts in %s", w.attempts, w.took.Round(time.Millisecond))
}

// The last candidate is never given up on: a write whose only endpoint
// never connects waits for it until the request's deadline, as a direct
// client would, and is then told it was not sent (it said "may have
// carried it out", which sends a careful client looking for a
// transaction that never left).
func TestWrite_TheLastEndpointThatNeverConnectsIsWaitedForAndTheWriteIsToldItWasNotSent(t *testing.T) {
	t.Parallel()
	hole := blackHole(t)
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = 1500 * time.Millisecond
		c.Endpoints[0].URL = hole
	}, sim.Config{})
	w := h.call(1, "eth_sendRawTransaction", "0x01")
	e := w.rpcError()
	if e == nil {
		t.Fatalf("write answered %s; want an error", w.body)
	}
	msg, _ := e["message"].(string)
	if w.took < 1400*time.Millisecond || w.attempts != 1 {
		t.Fatalf("write failed after %s and %d attempts (%s); want the one attempt waited for until the 1.5 s deadline", w.took, w.attempts, msg)
	}
	if !strings.Contains(msg, "no connection to s0 yet: not sent there") || strings.Contains(msg, "may have carried it out") ||
		e["code"].(float64) != float64(jsonrpc.CodeUpstream) {
		t.Fatalf("write's error %v: want it not sent, safe to send again (-32603)", e)
	}
	t.Logf("after %s: %s", w.took.Round(time.Millisecond), msg)
}
