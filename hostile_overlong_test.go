package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// overlongUpstream is a JSON-RPC upstream whose Content-Length is shorter
// than what it sends: after each answer come junk bytes (escape sequences,
// a URL with a credential), as a broken proxy sends them. It returns its URL.
func overlongUpstream(t *testing.T, junk string) string {
	t.Helper()
	return "http://" + testutil.ServeTCP(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			var call struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			body, _ := io.ReadAll(req.Body)
			json.Unmarshal(body, &call)
			result := `"0x1"`
			if call.Method == "eth_chainId" {
				result = `"0x7a69"`
			}
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, call.ID, result)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s%s", len(answer), answer, junk)
		}
	})
}

// Bytes an upstream sends past its answer's Content-Length are logged by
// Go's HTTP client through the standard library's global logger ("Unsolicited
// response received on idle HTTP channel starting with …", up to 4 KiB of
// them), which wrote straight to stderr: around rpcdash's logger (the
// console's log file), onto the console's screen, uncut. They reach
// rpcdash's own log now, scrubbed and cut as every upstream text is.
func TestHostile_UpstreamBytesPastTheAnswerStayInTheLog(t *testing.T) {
	junk := strings.Repeat("\x1b[2J\x1b]0;pwned\x07 junk past the answer ", 100) // 4 kB
	bad := overlongUpstream(t, junk)
	good := hostileSim(t, "good")
	cfg := "[server]\nlisten = \"127.0.0.1:0\"\nadmin = \"127.0.0.1:0\"\n[probes]\nenabled = false\n" +
		fmt.Sprintf("[[endpoints]]\nname = \"bad\"\nurl = %q\nprovider = \"bad\"\n", bad) +
		fmt.Sprintf("[[endpoints]]\nname = \"good\"\nurl = %q\nprovider = \"good\"\n", good.URL())
	p := startProc(t, "serve", "--config", writeConfig(t, cfg))
	m := p.Line(t, addrLine)
	e := &hostileEngine{t: t, p: p, rpc: m[1], admin: m[2]}
	for range 20 {
		if a := e.post(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`, nil); a.err != nil || a.status != 200 {
			t.Fatalf("HTTP %d %.200q (%v)", a.status, a.body, a.err)
		}
	}
	e.stop()
	unsolicited := 0
	for _, line := range strings.Split(strings.TrimSpace(p.Stderr()), "\n") {
		if !strings.HasPrefix(line, "time=") || len(line) > 1024 || strings.ContainsAny(line, "\x1b\x07") {
			t.Fatalf("stderr line of %d bytes outside rpcdash's log, uncut or unscrubbed: %.300q", len(line), line)
		}
		if strings.Contains(line, "Unsolicited response") {
			unsolicited++
		}
	}
	if unsolicited == 0 {
		t.Fatalf("no line tells of the bytes past the answer: the test exercised nothing; stderr:\n%s", p.Stderr())
	}
	t.Logf("%d lines tell of bytes past an answer, each in rpcdash's log, cut and scrubbed", unsolicited)
}
