package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
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

	// A round's three requests are served between the round's send and
	// its last answer: when both fall in one window, each sim served a
	// request in it, and with Q = 1 a shared incident window is one for
	// all three or for none. A round that straddles a window's edge (on a
	// busy machine rounds take tens of milliseconds) proves nothing, so
	// the test keeps sending until it has enough rounds whole in their
	// windows, with incidents and without, however slow the machine is.
	const window = 50 * time.Millisecond
	clean := map[int64]bool{} // windows a whole round fell in
	enough := func() bool {
		in, out := 0, 0
		for w := range clean {
			if _, hit := byHand.Latency.Incidents(3).Window(time.Duration(w) * window); hit {
				in++
			} else {
				out++
			}
		}
		return in >= 5 && out >= 5
	}
	for end := time.Now().Add(20 * time.Second); !enough() && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		var wg sync.WaitGroup
		sent := time.Now().UnixNano() / int64(window)
		for _, u := range urls {
			wg.Go(func() { call(t, strings.TrimPrefix(u, "http://"), "eth_chainId") })
		}
		wg.Wait()
		if done := time.Now().UnixNano() / int64(window); done == sent {
			clean[sent] = true
		}
	}
	var seen [][]int64
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
		seen = append(seen, c.IncidentWindows)
	}
	// In every window a whole round fell in, the three sims agree on
	// whether it was an incident; the windows are those of seed 3 (the
	// flags' --seed and the URL's incident_seed), incidents and not.
	in, out := 0, 0
	for _, w := range slices.Sorted(maps.Keys(clean)) {
		hit := slices.Contains(seen[0], w)
		if slices.Contains(seen[1], w) != hit || slices.Contains(seen[2], w) != hit {
			t.Errorf("window %d: incident for the sims %v %v %v", w, hit, slices.Contains(seen[1], w), slices.Contains(seen[2], w))
		}
		if _, want := byHand.Latency.Incidents(3).Window(time.Duration(w) * window); want != hit {
			t.Errorf("window %d: incident %v, seed 3's schedule says %v", w, hit, want)
		}
		if hit {
			in++
		} else {
			out++
		}
	}
	if in < 5 || out < 5 {
		t.Fatalf("%d windows with a whole round, %d incidents among them: too few to compare (%v)", len(clean), in, seen)
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

// `rpcdash sim --port N` puts its endpoints on N, N+1, … in order, so that
// a config can name them; a port already taken is an error naming it, and
// a port the endpoints do not fit above is a usage error.
func TestSim_PortPutsTheEndpointsOnPortsInOrder(t *testing.T) {
	first := testutil.FreePortRun(t, 2)
	p := startProc(t, "sim", "--port", strconv.Itoa(first), "steady", "flaky")
	for i, name := range []string{"steady", "flaky"} {
		want := fmt.Sprintf("http://127.0.0.1:%d", first+i)
		if got := p.Line(t, regexp.MustCompile(`^`+name+`\t(\S+)\t`))[1]; got != want {
			t.Fatalf("%s at %s, want %s", name, got, want)
		}
		// flaky fails 7 % of calls by design (errors and 429s); a result within
		// ten calls shows the sim serves on that port.
		var err error
		for range 10 {
			if _, err = tryCall(strings.TrimPrefix(want, "http://"), "eth_chainId"); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("%s at %s: %v", name, want, err)
		}
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	var out, errb strings.Builder
	if code := run([]string{"sim", "--port", strconv.Itoa(port), "steady"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), fmt.Sprintf("127.0.0.1:%d", port)) {
		t.Fatalf("a taken port: exit %d, %q; want 1 naming 127.0.0.1:%d", code, errb.String(), port)
	}
	for _, bad := range []string{"-1", "65535"} {
		errb.Reset()
		if code := run([]string{"sim", "--port", bad, "steady", "flaky"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--port") {
			t.Fatalf("--port %s for 2 endpoints: exit %d, %q; want a usage error naming --port", bad, code, errb.String())
		}
	}
}
