package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// `rpcdash sim` takes the scenario flags, and a sim:// URL with the same
// parameters, in another process or in this one, is slow in the same
// incident windows: a correlated incident reproduced by hand.
func TestSim_ScenarioFlagsAndURLsShareIncidentWindows(t *testing.T) {
	p := startProc(t, "sim", "--endpoints", "2", "--median", "0s", "--sigma", "0", "--tail", "0.5", "--tail-min", "1ms", "--tail-max", "1ms",
		"--correlated", "1", "--incident", "50ms", "--seed", "3")
	if m := p.Line(t, regexp.MustCompile(`^scenario: (.*)$`)); !strings.Contains(m[1], "2 endpoints") || !strings.Contains(m[1], "correlated 1 (shared 50ms windows, 50% of the time)") {
		t.Fatalf("scenario line %q", m[1])
	}
	var urls []string
	for range 2 {
		urls = append(urls, p.Line(t, regexp.MustCompile(`^sim\d\t(http://127\.0\.0\.1:\d+)\t`))[1])
	}
	byHand, err := sim.ParseURL("sim://fast?tail=0.5&tail_min=1ms&tail_max=1ms&correlated=1&incident=50ms&incident_seed=3")
	if err != nil {
		t.Fatal(err)
	}
	local := sim.New(byHand)
	if err := local.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	urls = append(urls, local.URL())

	const window = 50 * time.Millisecond
	first := time.Now().UnixNano() / int64(window)
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		var wg sync.WaitGroup
		for _, u := range urls {
			wg.Go(func() { call(t, strings.TrimPrefix(u, "http://"), "eth_chainId") })
		}
		wg.Wait()
	}
	last := time.Now().UnixNano() / int64(window)
	var windows [][]int64
	for _, u := range urls {
		resp, err := client.Get(u + "/_sim/counters")
		if err != nil {
			t.Fatal(err)
		}
		var c sim.Counters
		err = json.NewDecoder(resp.Body).Decode(&c)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("counters of %s: %v", u, err)
		}
		if c.Tails == 0 || c.Tails != c.IncidentTails {
			t.Errorf("%s: %d tails, %d in incident windows: with Q = 1 all are shared", u, c.Tails, c.IncidentTails)
		}
		// Windows cut by the run's start or end may have caught one sim's
		// request and not another's.
		windows = append(windows, slices.DeleteFunc(c.IncidentWindows, func(w int64) bool { return w <= first || w >= last }))
	}
	// The three sims' requests of one round may straddle a window's edge
	// on a busy machine, so one may see a window the others missed; shared
	// windows are most of each sim's (independent clocks would share
	// almost none).
	common := slices.DeleteFunc(slices.Clone(windows[0]), func(w int64) bool {
		return !slices.Contains(windows[1], w) || !slices.Contains(windows[2], w)
	})
	for _, ws := range windows {
		if len(common) < 5 || 10*len(common) < 8*len(ws) {
			t.Fatalf("incident windows differ or are too few: %d shared of %v", len(common), windows)
		}
	}
	p.Signal(t, syscall.SIGINT)
	if code := p.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}
}

func TestSim_RejectsPresetsWithEndpoints(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"sim", "--endpoints", "2", "steady"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "presets or --endpoints") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if code := run([]string{"sim", "--correlated", "0.5", "--tail", "0"}, &out, &errb); code == 0 {
		t.Fatal("a correlated scenario without a tail was accepted")
	}
}
