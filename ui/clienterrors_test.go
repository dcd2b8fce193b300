package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
	"github.com/rpcdash/rpcdash/themes"
)

// The header says how many requests of the last minute got rpcdash's own
// error, and it takes the same room whatever the count: the body below it
// does not move when errors start or stop.
func TestView_HeaderCountsClientErrors(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}, {200, 50}} {
		healthy := fixedModel(healthySnapshot(), themes.Default(), size[0], size[1])
		incident := fixedModel(incidentSnapshot(), themes.Default(), size[0], size[1])
		if got := strings.Join(healthy.headerLines(), "\n"); !strings.Contains(got, "err 0 ") {
			t.Errorf("%v: healthy header lacks err 0:\n%s", size, got)
		}
		got := strings.Join(incident.headerLines(), "\n")
		if !strings.Contains(got, "err 13 0.8%") { // 13 of 1617
			t.Errorf("%v: incident header lacks err 13 0.8%%:\n%s", size, got)
		}
		if h, i := len(healthy.headerLines()), len(incident.headerLines()); h != i {
			t.Errorf("%v: header %d lines without errors, %d with", size, h, i)
		}
	}
}

// Every request of a minute failing, 1145 at 20/s with nothing routable
// (the upstreams gone), read "err 1.1k 10…": the 100% was cut to what
// looked like a tenth. Count and share are whole, and the header keeps its
// lines at 120 columns, where it fills two exactly.
func TestView_HeaderErrorShareIsNeverCut(t *testing.T) {
	for _, c := range []struct {
		errors, requests int64
		want             string
	}{
		{1145, 1145, "err 1.1k 100%"},
		{999, 2_500_000, "err 999 <0.1%"},
	} {
		s := incidentSnapshot()
		s.Client.Errors, s.Client.Requests = c.errors, c.requests
		for _, size := range [][2]int{{80, 24}, {120, 36}} {
			m := fixedModel(s, themes.Default(), size[0], size[1])
			got := strings.Join(m.headerLines(), "\n")
			if !strings.Contains(got, c.want) {
				t.Errorf("%v: want %q:\n%s", size, c.want, got)
			}
			if h := len(fixedModel(healthySnapshot(), themes.Default(), size[0], size[1]).headerLines()); h != len(m.headerLines()) {
				t.Errorf("%v: header %d lines healthy, %d with %q", size, h, len(m.headerLines()), c.want)
			}
		}
	}
}

// Over a real engine, in process and attached: a read every endpoint fails
// is counted in the header.
func TestView_HeaderCountsClientErrorsOfARealEngine(t *testing.T) {
	for _, name := range []string{"in-process", "attached"} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, "alpha")
			mode := "error"
			if err := r.sims[0].Apply(sim.ControlRequest{Mode: &mode}); err != nil {
				t.Fatal(err)
			}
			r.read(t, 2, "eth_getBalance")
			m := console(t, r.backends(t)[name], 100, 30, false)
			if m.snap.Client.Errors != 2 {
				t.Fatalf("the engine counted %d client errors, want 2", m.snap.Client.Errors)
			}
			if got := strings.Join(m.headerLines(), "\n"); !strings.Contains(got, "err 2 100%") {
				t.Errorf("header lacks err 2 100%%:\n%s", got)
			}
		})
	}
}

func TestFmtCount_FitsFourCells(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1234: "1.2k", 12345: "12k", 999_999: "999k", 1_234_567: "1.2M"} {
		if got := fmtCount(n); got != want {
			t.Errorf("fmtCount(%d) = %q, want %q", n, got, want)
		}
	}
}
