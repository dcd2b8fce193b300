package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
)

// rpcdashNode is a running `rpcdash serve` with geth and one in-process
// simulated upstream (simA) in its pool.
type rpcdashNode struct {
	t      *testing.T
	listen string
	admin  string
	proc   *testutil.Proc
}

// URL is rpcdash's local JSON-RPC port.
func (r *rpcdashNode) URL() string { return "http://" + r.listen }

// The sim's chain id matches geth --dev (1337) and its block time is so
// long that its head stays at 0: geth, which mines a block per transaction,
// is never behind it and is never excluded for head lag.
const simURL = "sim://steady?chain_id=1337&median=5ms&block_time=1000000h"

const configTemplate = `[server]
listen = %q
admin = %q
request_timeout = "10s"

[chain]
kind = "evm"

[[endpoints]]
name = "geth"
url = %q
provider = "local"
region = "here"

[[endpoints]]
name = "simA"
url = %q
provider = "sim"
region = "here"

[breaker]
failures = 3
cooldown = "1s"
successes = 3

[probes]
interval = "500ms"
`

func startRpcdash(t *testing.T, g *gethNode) *rpcdashNode {
	t.Helper()
	dir := t.TempDir()
	r := &rpcdashNode{t: t}
	bin := testutil.Binary(t, raceEnabled)
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		a := testutil.FreeAddrs(t, 2)
		r.listen, r.admin = a[0], a[1]
		cfgPath := filepath.Join(dir, "config.toml")
		cfg := fmt.Sprintf(configTemplate, r.listen, r.admin, g.URL(), simURL)
		if err = os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		r.proc = testutil.Start(t, exec.Command(bin, "serve", "--config", cfgPath))
		err = r.proc.WaitReady(30*time.Second, func(ctx context.Context) error {
			var s status
			return r.adminJSON(ctx, http.MethodGet, "/v1/status", &s)
		})
		if err == nil || !errors.Is(err, testutil.ErrExited) {
			break
		}
		t.Logf("rpcdash did not start (retrying with other ports): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// After testutil.Start's own cleanup was registered, so this one runs
	// first: a graceful stop, checked.
	t.Cleanup(r.shutdown)
	return r
}

// shutdown stops rpcdash and fails the test if it did not exit cleanly or
// if its race detector reported anything.
func (r *rpcdashNode) shutdown() {
	if r.proc == nil {
		return
	}
	if err := r.proc.Stop(15 * time.Second); err != nil {
		r.t.Error(err)
	}
	if log := r.proc.Log(); strings.Contains(log, "WARNING: DATA RACE") {
		r.t.Errorf("rpcdash reported a data race:\n%s", log)
	}
	if r.t.Failed() {
		r.t.Logf("rpcdash log (tail):\n%s", r.proc.Tail(40))
	}
}

type status struct {
	Endpoints []struct {
		Name     string `json:"name"`
		Routable bool   `json:"routable"`
		Drained  bool   `json:"drained"`
		Breaker  struct {
			State               string `json:"state"`
			ConsecutiveFailures int    `json:"consecutive_failures"`
		} `json:"breaker"`
	} `json:"endpoints"`
}

// breaker returns the breaker state of the named endpoint.
func (s status) breaker(name string) string {
	for _, e := range s.Endpoints {
		if e.Name == name {
			return e.Breaker.State
		}
	}
	return "(no endpoint " + name + ")"
}

type event struct {
	Seq      uint64 `json:"seq"`
	Type     string `json:"type"`
	Endpoint string `json:"endpoint"`
	From     string `json:"from"`
	To       string `json:"to"`
	Message  string `json:"message"`
}

func (r *rpcdashNode) status() status {
	r.t.Helper()
	var s status
	if err := r.adminJSON(context.Background(), http.MethodGet, "/v1/status", &s); err != nil {
		r.t.Fatal(err)
	}
	return s
}

func (r *rpcdashNode) events() []event {
	r.t.Helper()
	var v struct {
		Events []event `json:"events"`
	}
	if err := r.adminJSON(context.Background(), http.MethodGet, "/v1/events", &v); err != nil {
		r.t.Fatal(err)
	}
	return v.Events
}

// breakerEvents lists the named endpoint's breaker transitions as
// "from>to" strings, in order.
func (r *rpcdashNode) breakerEvents(name string) []string {
	r.t.Helper()
	var out []string
	for _, e := range r.events() {
		if e.Type == "breaker" && e.Endpoint == name {
			out = append(out, e.From+">"+e.To)
		}
	}
	return out
}

func (r *rpcdashNode) drain(name string)   { r.action(name, "drain") }
func (r *rpcdashNode) undrain(name string) { r.action(name, "undrain") }

func (r *rpcdashNode) action(name, verb string) {
	r.t.Helper()
	if err := r.adminJSON(context.Background(), http.MethodPost, "/v1/endpoints/"+name+"/"+verb, nil); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rpcdashNode) adminJSON(ctx context.Context, method, path string, out any) error {
	c := engine.AdminClient{Base: "http://" + r.admin, HTTP: plainHTTP}
	if err := c.Do(ctx, method, path, nil, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}
