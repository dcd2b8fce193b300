package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/ui"
)

// consoleDrills hand the console bench's failover drill (ui may import
// only engine and themes) and outlive it: stop ends any drill still
// running and waits until it has cleared its fault.
type consoleDrills struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	stopped bool // no drill starts once stop began
}

func newConsoleDrills() *consoleDrills {
	ctx, cancel := context.WithCancel(context.Background())
	return &consoleDrills{ctx: ctx, cancel: cancel}
}

// stop ends any drill still running and waits until it has cleared its
// fault; a drill asked for after it (a command the program started as it
// ended) never starts. It is called however the console ended.
func (c *consoleDrills) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}

// begin counts a drill in, or says it must not run (stop began): the
// drill runs in a goroutine of the console's, which may start after the
// program returned, and a WaitGroup.Add racing stop's Wait let it run
// on, unwaited for.
func (c *consoleDrills) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return false
	}
	c.wg.Add(1)
	return true
}

// drill runs against the admin API at adminURL, its own reads going to
// rpcURL; with no rpcURL (attached: the instance's RPC port is not known)
// it sends none and judges by the instance's own traffic. Its actions are
// the console's in the instance's events.
func (c *consoleDrills) drill(adminURL, rpcURL, token string) *ui.Drill {
	load := "It sends up to 20 reads a second of its own to " + rpcURL
	if rpcURL == "" {
		load = "It sends no reads of its own (attached, the instance's RPC port is not known): it judges by the instance's own traffic, so that must be flowing"
	}
	run := func(ctx context.Context, mode string, onStep func(ui.DrillStep)) error {
		if !c.begin() {
			return ui.NoVerdict{Err: errors.New("not run: the console was ending")}
		}
		defer c.wg.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(c.ctx, cancel)()
		cfg := bench.DrillConfig{RPCURL: rpcURL, NoLoad: rpcURL == "", Mode: mode,
			Admin: bench.Admin{URL: adminURL, Token: token, Actor: string(engine.ActorConsole)}}
		if err := bench.CheckDrillTargets(cfg); err != nil {
			// Its words name rpcdash drill's flags (--admin, --allow-remote),
			// which the console has not: say what the console does, and
			// what runs the drill there.
			return ui.NoVerdict{Err: fmt.Errorf("the console runs the drill only against an instance on loopback, not %s (rpcdash drill --admin URL --allow-remote runs it there)", engine.ShownURL(adminURL))}
		}
		_, err := bench.Drill(ctx, cfg, func(s bench.DrillStep) {
			onStep(ui.DrillStep{Index: s.Index, Name: s.Name, State: s.State, Took: s.Took, Summary: s.Summary, Evidence: s.Evidence})
		})
		return consoleDrillError(err)
	}
	cutOut := func(mode string, failures int) string { return bench.DrillCutOutRule(mode, failures, rpcURL != "") }
	return &ui.Drill{Run: run, Steps: bench.DrillSteps, Modes: bench.DrillModes, Load: load, CutOut: cutOut}
}

// consoleDrillError is the drill's error in the console's words: the
// console says "failover drill: " before it, so the error's own "drill: "
// goes (`step "readmitted" failed: …`, not `drill: step …`). It still
// unwraps to what it was.
func consoleDrillError(err error) error {
	if err == nil {
		return err
	}
	if strings.HasPrefix(err.Error(), "drill: ") {
		err = trimmedError{err}
	}
	// Refused its lease, or stopped by the instance's restart or another
	// drill taking its lease: no verdict on failover, not FAILED.
	if de := (*bench.DrillError)(nil); errors.Is(err, bench.ErrDrillRunning) || errors.As(err, &de) && de.Interrupted {
		err = ui.NoVerdict{Err: err}
	}
	return err
}

type trimmedError struct{ error }

func (e trimmedError) Error() string { return strings.TrimPrefix(e.error.Error(), "drill: ") }
func (e trimmedError) Unwrap() error { return e.error }
