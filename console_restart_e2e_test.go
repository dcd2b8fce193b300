package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// The real binary in a real terminal: f opened the fault menu on steady,
// the attached `rpcdash serve` was stopped and started again, and the
// menu stayed open over the new process with the restart note under it;
// enter and y then injected the fault into the new instance, on an
// endpoint chosen from the old one's screen. The menu is closed, saying
// so, and the same keys send nothing.
func TestConsole_AttachedFaultMenuIsClosedByARestart(t *testing.T) {
	bin, dir, admin, startServe := shippedServe(t)
	up := func() {
		testutil.WaitUntil(t, 10*time.Second, "serve", func() bool { _, err := tryGet("http://" + admin + "/v1/status"); return err == nil })
	}
	serve := startServe()
	up()
	tm := newTerm(t, dir, fmt.Sprintf("%s console --attach http://%s --log-file %s", bin, admin, filepath.Join(dir, "console.log")))
	tm.waitText(20*time.Second, "attached http://"+admin, "steady", "● closed")
	tm.keys("f")
	tm.waitText(5*time.Second, "Inject a fault on steady")

	serve.Signal(t, os.Interrupt)
	serve.Wait(t, 15*time.Second)
	startServe()
	up()
	screen := tm.waitText(20*time.Second, "the attached instance restarted")
	if strings.Contains(screen, "Inject a fault on steady") || !strings.Contains(screen, "the fault menu on steady closed, nothing sent") {
		t.Errorf("the old instance's fault menu is not closed, saying so, over the new one:\n%s", screen)
	}
	// What the operator would have pressed next in the menu.
	tm.keys("Enter")
	tm.keys("y")
	time.Sleep(time.Second) // a fault sent would be in the status by now
	for _, ep := range statusOf(t, admin).Endpoints {
		if ep.Fault != nil {
			t.Fatalf("%s has a %s fault: the old instance's menu acted on the new one:\n%s", ep.Name, ep.Fault.Mode, tm.screen())
		}
	}
	// Enter opened the endpoint's detail. Escape closes it, seen closed
	// before q: an Escape and a q read together are one key, alt+q, which
	// quits nothing (on a loaded machine the console read both at once,
	// stayed in the detail, and the wait for its exit timed out).
	tm.waitText(5*time.Second, "enter or esc closes")
	tm.keys("Escape")
	tm.waitFor("the endpoint detail closed", 5*time.Second, func(s string) bool { return !strings.Contains(s, "enter or esc closes") })
	tm.keys("q")
	if b := tm.exited(); b != "EXIT=0" {
		t.Fatalf("console exited with %q", b)
	}
}
