package main

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// Every command that names a running rpcdash takes a full URL or a bare
// host:port alike: `status --admin http://…` used to become
// http://http//… and a DNS lookup of "http".
func TestCLI_RunningInstanceByURLOrHostPort(t *testing.T) {
	p := startProc(t, "serve", "--config", writeConfig(t, loopbackServer+validEndpoint))
	m := p.Line(t, addrLine)
	rpcHost, adminHost := m[1], m[2]
	for _, admin := range []string{"http://" + adminHost, "http://" + adminHost + "/", adminHost} {
		var out, errb bytes.Buffer
		if code := run([]string{"status", "--admin", admin, "--json"}, &out, &errb); code != 0 {
			t.Errorf("status --admin %s: exit %d: %s", admin, code, errb.String())
			continue
		}
		var s engine.Snapshot
		if err := json.Unmarshal(out.Bytes(), &s); err != nil || len(s.Endpoints) != 1 {
			t.Errorf("status --admin %s: %v, %d endpoints:\n%s", admin, err, len(s.Endpoints), out.String())
		}
	}
	var out, errb bytes.Buffer
	args := []string{"bench", "--target", rpcHost, "--admin", adminHost, "--policies", "off", "--delays", "", "--quantiles", "",
		"--rate", "50", "--duration", "300ms", "--warmup", "100ms", "--format", "json"}
	if code := run(args, &out, &errb); code != 0 {
		t.Errorf("bench --target %s --admin %s: exit %d: %s", rpcHost, adminHost, code, errb.String())
	} else if !strings.Contains(out.String(), "http://"+adminHost) {
		t.Errorf("bench report does not name http://%s:\n%s", adminHost, out.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--admin", "ftp://" + adminHost}, "--admin: "},
		{[]string{"drill", "--admin", "ftp://" + adminHost, "--no-load"}, "drill: --admin: "},
		{[]string{"bench", "--target", "ftp://" + rpcHost}, "bench: --target: "},
		{[]string{"console", "--attach", "ftp://" + adminHost}, "--attach: "},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
	p.Signal(t, syscall.SIGINT)
	if code := p.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("serve exit %d", code)
	}
}

// A provider's key is often in its URL's path: a URL flag's errors show
// its scheme, host and port, never the path (nor what Go's HTTP client
// quotes of it).
func TestCLI_AKeyInAURLFlagIsNeverShown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v3/SECRETKEY123"
	ln.Close() // nothing answers there
	for _, args := range [][]string{
		{"status", "--admin", closed},
		{"bench", "--target", closed, "--duration", "1s"},
		// The drill named --admin whole in its first line and in Go's
		// error, which repeats the URL asked for.
		{"drill", "--admin", closed, "--target", closed},
	} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code == 0 || strings.Contains(errb.String()+out.String(), "SECRETKEY123") || !strings.Contains(errb.String(), "REDACTED") {
			t.Errorf("%v: exit %d, stderr %q: want a failure naming the URL with its path REDACTED", args, code, errb.String())
		}
	}
}
