package engine_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A keep-alive connection that gets the first one to three bytes of a next
// request and then nothing is closed at server.read_timeout from those
// bytes, as a request begun on a new connection is. net/http waits for four
// bytes under server.idle_timeout: one to three held the connection for its
// 2 minutes, and, its request begun, it was never reclaimed at
// server.max_conns (256 such connections kept every new client out for
// 110 s).
func TestConnLimit_ANextRequestBegunAndLeftIsCutAtTheReadTimeout(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Server.ReadTimeout = 300 * time.Millisecond
		c.Server.IdleTimeout = time.Minute
	}, sim.Config{})
	for _, addr := range []string{strings.TrimPrefix(h.rpc, "http://"), strings.TrimPrefix(h.admin, "http://")} {
		for _, begun := range []string{"P", "POS"} {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			body := `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}`
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if strings.HasSuffix(addr, strings.TrimPrefix(h.admin, "http://")) {
				req, _ = http.NewRequest(http.MethodGet, "http://"+addr+"/v1/status?compact=1", nil)
			}
			if err := req.Write(c); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			// Sent once the server is done with the request: a byte that
			// comes as it ends is taken by net/http's background read (the
			// client-gone check), and the connection looks idle with nothing
			// since, reclaimable at server.max_conns as any idle one.
			time.Sleep(300 * time.Millisecond)
			if _, err := io.WriteString(c, begun); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = io.Copy(io.Discard, br)
			took := time.Since(sent)
			c.Close()
			if errors.Is(err, os.ErrDeadlineExceeded) || took > 3*time.Second {
				t.Fatalf("%s: %q sent after a finished request, then nothing: the connection still open %s later (read_timeout 300ms)", addr, begun, took.Round(time.Millisecond))
			}
		}
	}
}
