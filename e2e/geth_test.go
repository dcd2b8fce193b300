package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// gethNode is a geth --dev process with its own datadir and ports. It can
// be stopped and started again on the same port and datadir.
type gethNode struct {
	t       *testing.T
	datadir string
	http    string // JSON-RPC, host:port
	authrpc string
	metrics string
	extra   []string // flags beyond the dev chain's own
	proc    *testutil.Proc
}

// URL is geth's own JSON-RPC address, for asking it directly.
func (g *gethNode) URL() string { return "http://" + g.http }

// startGeth starts a fresh dev chain, with extra flags, and stops it when
// the test ends.
func startGeth(t *testing.T, extra ...string) *gethNode {
	t.Helper()
	g := &gethNode{t: t, datadir: filepath.Join(t.TempDir(), "geth"), extra: extra}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		a := testutil.FreeAddrs(t, 3)
		g.http, g.authrpc, g.metrics = a[0], a[1], a[2]
		if err = g.start(); err == nil || !errors.Is(err, testutil.ErrExited) {
			break
		}
		t.Logf("geth did not start (retrying with other ports): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// After testutil.Start's own cleanup was registered, so this one runs
	// first: a graceful stop, checked.
	t.Cleanup(func() {
		if err := g.proc.Stop(15 * time.Second); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("geth log (tail):\n%s", g.proc.Tail(20))
		}
	})
	return g
}

// start runs geth and waits until it answers JSON-RPC.
func (g *gethNode) start() error {
	args := []string{
		"--dev",
		"--datadir", g.datadir,
		"--http", "--http.addr", "127.0.0.1", "--http.port", port(g.http),
		"--http.api", "eth,net,web3,txpool",
		"--authrpc.addr", "127.0.0.1", "--authrpc.port", port(g.authrpc),
		"--metrics", "--metrics.addr", "127.0.0.1", "--metrics.port", port(g.metrics),
		"--nodiscover", "--maxpeers", "0", "--port", "0", "--ipcdisable",
		"--verbosity", "3",
	}
	args = append(args, g.extra...)
	g.proc = testutil.Start(g.t, exec.Command(gethBin, args...))
	return g.proc.WaitReady(30*time.Second, func(ctx context.Context) error {
		// The answer must be this geth's, not another process's that took
		// the port between FreeAddrs and geth's bind (a parallel test's
		// sim): in a CI run the readiness call was answered a second
		// before this geth said its HTTP server started, and the test's
		// first request met a refused connection.
		if !strings.Contains(g.proc.Log(), "HTTP server started") || !strings.Contains(g.proc.Log(), "endpoint="+g.http) {
			return errors.New("geth has not said its HTTP server started on " + g.http)
		}
		_, err := rawCall(ctx, g.URL(), `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}`)
		return err
	})
}

// stop stops geth by PID: SIGTERM, then SIGKILL after a bound.
func (g *gethNode) stop() {
	g.t.Helper()
	if err := g.proc.Stop(15 * time.Second); err != nil {
		g.t.Error(err)
	}
}

// restart starts geth again on the same port and datadir.
func (g *gethNode) restart() {
	g.t.Helper()
	if err := g.start(); err != nil {
		g.t.Fatal(err)
	}
}

// rpcServed reads how many requests for method geth answered since the
// previous read, from its metrics endpoint. geth keeps these counts in
// resetting samples: every read starts a new count.
func (g *gethNode) rpcServed(method string) (int, error) {
	resp, err := plainHTTP.Get("http://" + g.metrics + "/debug/metrics/prometheus")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("geth metrics: %s", resp.Status)
	}
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if name == "rpc_duration_"+method+"_success_count" || name == "rpc_duration_"+method+"_failure_count" {
			v, err := strconv.Atoi(val)
			if err != nil {
				return 0, fmt.Errorf("geth metric %s: %w", name, err)
			}
			n += v
		}
	}
	return n, sc.Err()
}

// port is the port of a host:port address.
func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
