package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
)

// End-to-end: the real binary in a real terminal (tmux), over the shipped
// config, in process and attached to a separate `rpcdash serve`.

// termCount numbers the tmux servers of a run: each test has its own.
var termCount atomic.Int64

// term is one tmux server of our own (its own socket: other tmux sessions
// on the machine are never touched) running one window.
type term struct {
	t    *testing.T
	sock string
	exit string // the file the pane writes the program's exit status to
}

func newTerm(t *testing.T, dir, command string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is required for the console's end-to-end tests (.ci/run installs it)")
		}
		t.Skip("tmux not installed: apt-get install -y tmux (.ci/run does)")
	}
	tm := &term{t: t, sock: fmt.Sprintf("rpcdash-e2e-%d-%d", os.Getpid(), termCount.Add(1)), exit: filepath.Join(dir, "exit")}
	// The pane outlives the program so its last screen can be read.
	script := command + "; echo EXIT=$? > " + tm.exit + "; sleep 120"
	out, err := exec.Command("tmux", "-L", tm.sock, "-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", "120", "-y", "36",
		"env", "TERM=xterm-256color", "sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() {
		// Every failure shows the screen it failed on, whatever failed
		// (a wait for the program's exit, a serve that never came up):
		// a failure that only said "timed out waiting for exit" left
		// nothing to tell why the console had not quit.
		if t.Failed() {
			out, err := exec.Command("tmux", "-L", tm.sock, "capture-pane", "-p", "-t", "e2e").Output()
			if err != nil {
				t.Logf("the screen at the failure could not be read: %v", err)
			} else {
				t.Logf("the screen at the failure:\n%s", out)
			}
		}
		exec.Command("tmux", "-L", tm.sock, "kill-server").Run()
	})
	return tm
}

// exited waits for the program to end and returns its "EXIT=N" line.
func (tm *term) exited() string {
	tm.t.Helper()
	var b []byte
	testutil.WaitUntil(tm.t, 15*time.Second, "exit", func() bool {
		b, _ = os.ReadFile(tm.exit)
		return len(b) > 0
	})
	return strings.TrimSpace(string(b))
}

func (tm *term) screen() string {
	out, err := exec.Command("tmux", "-L", tm.sock, "capture-pane", "-p", "-t", "e2e").Output()
	if err != nil {
		tm.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

func (tm *term) keys(keys ...string) {
	if out, err := exec.Command("tmux", append([]string{"-L", tm.sock, "send-keys", "-t", "e2e"}, keys...)...).CombinedOutput(); err != nil {
		tm.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// waitFor polls the screen until cond holds.
func (tm *term) waitFor(what string, limit time.Duration, cond func(screen string) bool) string {
	tm.t.Helper()
	var s string
	if !testutil.Poll(limit, func() bool { s = tm.screen(); return cond(s) }) {
		tm.t.Fatalf("the screen never showed %s:\n%s", what, s)
	}
	return s
}

func (tm *term) waitText(limit time.Duration, texts ...string) string {
	tm.t.Helper()
	return tm.waitFor(strings.Join(texts, ", "), limit, func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

func statusOf(t *testing.T, admin string) engine.Snapshot {
	t.Helper()
	var s engine.Snapshot
	if err := json.Unmarshal([]byte(get(t, "http://"+admin+"/v1/status")), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func attempts(ep engine.EndpointSnapshot) int64 {
	a := ep.Accounting
	return a.Primary + a.Hedge + a.Failover
}

// checkConsole drives a console showing the shipped config's pool whose
// engine answers on admin: the endpoints update, d y drains the selected
// one (steady) on screen and in /v1/status, which then gets no new traffic
// while the others do, and q exits 0 with the terminal restored.
func checkConsole(t *testing.T, tm *term, dir, admin string) {
	first := tm.waitText(20*time.Second, "steady", "tail", "flaky", "demo load 20/s", "● closed")
	tm.waitFor("the pool updating", 10*time.Second, func(s string) bool { return s != first && strings.Contains(s, "steady") })
	before := statusOf(t, admin).Totals.Requests
	testutil.WaitUntil(t, 10*time.Second, "traffic", func() bool { return statusOf(t, admin).Totals.Requests > before })

	checkQClosesOverlays(t, tm, dir, admin)
	checkFreezeKeepsTheLayout(t, tm)
	tm.keys("d")
	tm.waitText(5*time.Second, "Drain steady?")
	tm.keys("y")
	screen := tm.waitText(5*time.Second, "✓ drain steady", "DRAINED")
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "steady") && strings.Contains(l, "● closed") && !strings.Contains(l, "DRAINED") {
			t.Fatalf("steady's row is not marked drained:\n%s", screen)
		}
	}
	s := statusOf(t, admin)
	if !s.Endpoints[0].Drained || s.Endpoints[0].Name != "steady" {
		t.Fatalf("/v1/status: %+v", s.Endpoints[0])
	}
	// In-flight requests finish; after that no new attempt reaches steady
	// while the demo load goes on to the others.
	time.Sleep(time.Second)
	s1 := statusOf(t, admin)
	testutil.WaitUntil(t, 15*time.Second, "the others to take new traffic", func() bool {
		s2 := statusOf(t, admin)
		return attempts(s2.Endpoints[1])+attempts(s2.Endpoints[2]) > attempts(s1.Endpoints[1])+attempts(s1.Endpoints[2])+10
	})
	if s2 := statusOf(t, admin); attempts(s2.Endpoints[0]) != attempts(s1.Endpoints[0]) {
		t.Fatalf("drained steady took %d new attempts", attempts(s2.Endpoints[0])-attempts(s1.Endpoints[0]))
	}
	tm.keys("q")
	if b := tm.exited(); b != "EXIT=0" {
		t.Fatalf("console exited with %q", b)
	}
	// The terminal is back: the alternate screen is gone, the normal one
	// shows what the console printed at exit.
	after := tm.waitText(5*time.Second, "rpcdash: logs in")
	if strings.Contains(after, "ENDPOINT") || strings.Contains(after, "╭") {
		t.Fatalf("the console's screen is still there after exit:\n%s", after)
	}
}

// checkQClosesOverlays: q at the drain question, in the fault menu and in
// the tuning view answers no or closes it, as esc does; it used to quit
// the console (in process: the proxy with it) with steady undrained.
func checkQClosesOverlays(t *testing.T, tm *term, dir, admin string) {
	t.Helper()
	for _, open := range []struct {
		keys  []string
		shows string
	}{{[]string{"d"}, "Drain steady?"}, {[]string{"f"}, "Inject a fault on steady"}, {[]string{"Tab", "Down", "t"}, "Hedge tuning · eth_"}} {
		for _, k := range open.keys {
			tm.keys(k)
		}
		tm.waitText(5*time.Second, open.shows)
		tm.keys("q")
		tm.waitFor(open.shows+" closed by q", 5*time.Second, func(s string) bool {
			return !strings.Contains(s, open.shows) && strings.Contains(s, "Endpoints")
		})
		if open.keys[0] == "Tab" {
			tm.keys("BTab")
		}
	}
	time.Sleep(500 * time.Millisecond) // a quit would have ended the program by now
	if b, _ := os.ReadFile(tm.exit); len(b) > 0 {
		t.Fatalf("q at an overlay quit the console (%s):\n%s", b, tm.screen())
	}
	if s := statusOf(t, admin); s.Endpoints[0].Drained || s.Endpoints[0].Fault != nil {
		t.Fatalf("q at an overlay changed steady: %+v", s.Endpoints[0])
	}
}

// checkFreezeKeepsTheLayout: p at 120×36 shows FROZEN in the header's
// own lines (it took a third one, moving every panel down a row).
func checkFreezeKeepsTheLayout(t *testing.T, tm *term) {
	t.Helper()
	panelsAt := func(s string) int {
		for i, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "Endpoints") && strings.Contains(l, "╭") {
				return i
			}
		}
		return -1
	}
	before := panelsAt(tm.waitText(5*time.Second, "snapshot"))
	tm.keys("p")
	frozen := tm.waitText(5*time.Second, "FROZEN", "p resumes")
	tm.keys("p")
	tm.waitFor("the thaw", 5*time.Second, func(s string) bool { return !strings.Contains(s, "FROZEN") })
	if got := panelsAt(frozen); got != before || before < 0 {
		t.Fatalf("frozen, the panels start on line %d, were on %d:\n%s", got, before, frozen)
	}
}

func TestConsole_EndToEndInATerminal(t *testing.T) {
	bin := testutil.Binary(t, false)
	dir := t.TempDir() // no config.toml here: the shipped one, embedded
	addrs := testutil.FreeAddrs(t, 2)
	rpc, admin := addrs[0], addrs[1]
	tm := newTerm(t, dir, fmt.Sprintf("cd %s && RPCDASH_SERVER_LISTEN=%s RPCDASH_SERVER_ADMIN=%s %s --log-file %s",
		dir, rpc, admin, bin, filepath.Join(dir, "console.log")))
	checkConsole(t, tm, dir, admin)
	if out := tm.screen(); !strings.Contains(out, "running the shipped config") {
		t.Errorf("the console did not say it runs the shipped config:\n%s", out)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "console.log")); !strings.Contains(string(log), "shutting down") {
		t.Errorf("log file lacks the shutdown:\n%s", log)
	}
}

// shippedServe is the binary, a folder holding the shipped config.toml,
// the admin address a `rpcdash serve` of it listens on, and the function
// that starts that serve (again, for a restart), on free loopback ports.
func shippedServe(t *testing.T) (bin, dir, admin string, startServe func() *testutil.Proc) {
	t.Helper()
	bin = testutil.Binary(t, false)
	dir = t.TempDir()
	shipped, err := os.ReadFile("config.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), shipped, 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := testutil.FreeAddrs(t, 2)
	rpc, admin := addrs[0], addrs[1]
	startServe = func() *testutil.Proc {
		serve := exec.Command(bin, "serve", "--config", filepath.Join(dir, "config.toml"))
		serve.Env = append(os.Environ(), "RPCDASH_SERVER_LISTEN="+rpc, "RPCDASH_SERVER_ADMIN="+admin)
		return testutil.Start(t, serve)
	}
	return bin, dir, admin, startServe
}

func TestConsole_AttachedEndToEndInATerminal(t *testing.T) {
	bin, dir, admin, startServe := shippedServe(t)
	serve := startServe()
	testutil.WaitUntil(t, 10*time.Second, "serve", func() bool { _, err := tryGet("http://" + admin + "/v1/status"); return err == nil })

	tm := newTerm(t, dir, fmt.Sprintf("%s console --attach http://%s --log-file %s", bin, admin, filepath.Join(dir, "console.log")))
	tm.waitText(10*time.Second, "attached http://"+admin)
	// The instance goes away and comes back: the console says so, keeps
	// the last data on screen and keeps answering keys.
	checkConsoleSurvivesAnOutage(t, tm, serve)
	startServe()
	tm.waitFor("the reconnection", 20*time.Second, func(s string) bool { return !strings.Contains(s, "STALE") && strings.Contains(s, "steady") })
	checkConsole(t, tm, dir, admin)
}

func checkConsoleSurvivesAnOutage(t *testing.T, tm *term, serve *testutil.Proc) {
	t.Helper()
	tm.waitText(20*time.Second, "steady", "tail", "flaky")
	serve.Signal(t, os.Interrupt)
	serve.Wait(t, 15*time.Second)
	tm.waitText(10*time.Second, "STALE", "reconnecting", "steady")
	// A drain asked now says its figures are the last answer's.
	tm.keys("d")
	tm.waitText(5*time.Second, "Drain steady?", "(STALE:")
	tm.keys("n")
	tm.waitFor("the question closed", 5*time.Second, func(s string) bool { return !strings.Contains(s, "Drain steady?") })
	tm.keys("p")
	tm.waitText(5*time.Second, "FROZEN")
	tm.keys("p")
	tm.waitText(5*time.Second, "STALE")
}

func tryGet(url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return resp.Status, nil
}

// TestConsole_SIGTERMExitsCleanlyWithoutColourUnderNO_COLOR: SIGTERM stops
// the console like q (exit 0, engine shut down, terminal restored), and
// NO_COLOR leaves no colour on the screen while state still reads.
func TestConsole_SIGTERMExitsCleanlyWithoutColourUnderNO_COLOR(t *testing.T) {
	bin := testutil.Binary(t, false)
	dir := t.TempDir()
	addrs := testutil.FreeAddrs(t, 2)
	rpc, admin := addrs[0], addrs[1]
	tm := newTerm(t, dir, fmt.Sprintf("cd %s && NO_COLOR=1 RPCDASH_SERVER_LISTEN=%s RPCDASH_SERVER_ADMIN=%s %s --log-file %s",
		dir, rpc, admin, bin, filepath.Join(dir, "console.log")))
	tm.waitText(20*time.Second, "steady", "● closed", "demo load 20/s")
	raw, err := exec.Command("tmux", "-L", tm.sock, "capture-pane", "-p", "-e", "-t", "e2e").Output()
	if err != nil {
		t.Fatal(err)
	}
	if c := colourSGR.Find(raw); c != nil {
		t.Fatalf("NO_COLOR: the screen has colour (%q):\n%q", c, raw)
	}
	pid, err := exec.Command("tmux", "-L", tm.sock, "list-panes", "-t", "e2e", "-F", "#{pane_pid}").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The pane runs sh -c "…; echo EXIT" whose child is rpcdash.
	child, err := exec.Command("pgrep", "-P", strings.TrimSpace(string(pid))).Output()
	if err != nil {
		t.Fatalf("no rpcdash under the pane: %v", err)
	}
	childPID, err := strconv.Atoi(strings.TrimSpace(string(child)))
	if err != nil {
		t.Fatalf("pgrep: %q", child)
	}
	if err := testutil.Terminate(childPID, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if b := tm.exited(); b != "EXIT=0" {
		t.Fatalf("SIGTERM: console exited with %q", b)
	}
	after := tm.waitText(5*time.Second, "rpcdash: logs in")
	if strings.Contains(after, "ENDPOINT") {
		t.Fatalf("the console's screen is still there after SIGTERM:\n%s", after)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "console.log")); !strings.Contains(string(log), "shutting down") {
		t.Errorf("the engine did not shut down gracefully:\n%s", log)
	}
}

// colourSGR matches an SGR sequence that sets a foreground or background
// colour (30–37, 38;…, 40–47, 48;…, 90–97, 100–107).
var colourSGR = regexp.MustCompile(`\x1b\[(?:[0-9]+;)*(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9]+)*m`)

// RPCDASH_SERVER_ADMIN_TOKEN is server.admin_token: in process it sets the
// engine's token (the console refused to start, taking it for a --token
// without --attach), and it shows on neither the screen nor the log.
func TestConsole_EnvironmentAdminTokenConfiguresTheInProcessEngine(t *testing.T) {
	const token = "tok-93c2"
	bin := testutil.Binary(t, false)
	dir := t.TempDir()
	addrs := testutil.FreeAddrs(t, 2)
	rpc, admin := addrs[0], addrs[1]
	tm := newTerm(t, dir, fmt.Sprintf("cd %s && RPCDASH_SERVER_ADMIN_TOKEN=%s RPCDASH_SERVER_LISTEN=%s RPCDASH_SERVER_ADMIN=%s %s --log-file %s",
		dir, token, rpc, admin, bin, filepath.Join(dir, "console.log")))
	screen := tm.waitText(20*time.Second, "steady", "● closed")
	statusCode := func(auth string) int {
		req, err := http.NewRequest(http.MethodGet, "http://"+admin+"/v1/status", nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if without, with := statusCode(""), statusCode(token); without != http.StatusUnauthorized || with != http.StatusOK {
		t.Errorf("GET /v1/status: HTTP %d without the token, %d with it; want 401 and 200", without, with)
	}
	tm.keys("q")
	if b := tm.exited(); b != "EXIT=0" {
		t.Fatalf("console exited with %q:\n%s", b, tm.screen())
	}
	log, _ := os.ReadFile(filepath.Join(dir, "console.log"))
	if strings.Contains(screen+tm.screen(), token) || strings.Contains(string(log), token) {
		t.Errorf("the token shows on the screen or in the log:\n%s\n%s", screen, log)
	}
}

// An attached console whose --config holds only [ui] runs (it exited 1:
// "at least one [[endpoints]] entry is required").
func TestConsole_AttachedWithAUIOnlyConfig(t *testing.T) {
	bin := testutil.Binary(t, false)
	dir := t.TempDir()
	serve := startProc(t, "serve", "--config", writeConfig(t, loopbackServer+"[[endpoints]]\nname = \"uionly\"\nurl = \"sim://fast\"\n"))
	admin := serve.Line(t, addrLine)[2]
	uiOnly := writeConfig(t, "[ui]\ntheme = \"light\"\n")
	tm := newTerm(t, dir, fmt.Sprintf("%s console --attach http://%s --config %s --log-file %s", bin, admin, uiOnly, filepath.Join(dir, "console.log")))
	tm.waitText(10*time.Second, "attached http://"+admin, "uionly")
	tm.keys("q")
	if b := tm.exited(); b != "EXIT=0" {
		t.Fatalf("console exited with %q:\n%s", b, tm.screen())
	}
	serve.Signal(t, os.Interrupt)
	if code := serve.Wait(t, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d: %s", code, serve.Stderr())
	}
}
