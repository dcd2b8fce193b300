package ui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// updating is the -update flag (registered by teatest's golden package,
// which the flows import): go test ./ui -update rewrites the goldens.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func sizeMsg(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

var goldenSizes = [][2]int{{80, 24}, {100, 30}, {160, 48}}

// TestView_Goldens renders each fixed Snapshot at 80×24, 100×30 and 160×48
// with colour off, for every theme: themes must not change the layout, so
// every theme matches the one golden of its fixture and size.
func TestView_Goldens(t *testing.T) {
	for _, fx := range fixtures {
		for _, sz := range goldenSizes {
			name := fmt.Sprintf("%s_%dx%d", fx.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				var first string
				for _, tn := range themes.Names() {
					th, err := themes.Load(tn)
					if err != nil {
						t.Fatal(err)
					}
					got := fixedModel(fx.snap(), th, sz[0], sz[1]).View()
					checkFits(t, got, sz[0], sz[1])
					if first == "" {
						first = got
						golden(t, filepath.Join("testdata", name+".golden"), got)
					} else if got != first {
						t.Errorf("theme %s lays %s out differently from %s", tn, name, themes.Names()[0])
					}
				}
			})
		}
	}
}

// TestView_ThemeColourGoldens pins each theme's colours on the incident
// screen (true colour), where every state colour shows.
func TestView_ThemeColourGoldens(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, tn := range themes.Names() {
		th, _ := themes.Load(tn)
		got := fixedModel(incidentSnapshot(), th, 100, 30).View()
		golden(t, filepath.Join("testdata", "colour_"+tn+"_incident_100x30.golden"), got)
	}
}

func TestView_TooSmallSaysWhatItNeeds(t *testing.T) {
	got := fixedModel(healthySnapshot(), themes.Default(), 79, 30).View()
	if !strings.Contains(got, "needs 80×24, have 79×30") {
		t.Fatalf("79 columns: %q", got)
	}
	got = fixedModel(healthySnapshot(), themes.Default(), 120, 23).View()
	if !strings.Contains(got, "have 120×23") {
		t.Fatalf("23 rows: %q", got)
	}
}

// TestView_NeverExceedsTheTerminal walks sizes between the goldens'.
func TestView_NeverExceedsTheTerminal(t *testing.T) {
	for _, fx := range fixtures {
		for w := 80; w <= 170; w += 7 {
			for h := 24; h <= 50; h += 5 {
				checkFits(t, fixedModel(fx.snap(), themes.Default(), w, h).View(), w, h)
			}
		}
	}
}

// TestView_KeepsWhatNeverGoes checks the 80×24 screen still names every
// endpoint with its state word, badges, p95 and lag, and the status line.
func TestView_KeepsWhatNeverGoes(t *testing.T) {
	got := fixedModel(incidentSnapshot(), themes.Default(), 80, 24).View()
	for _, want := range []string{"alchemy", "infura", "quicknode", "✖ OPEN", "● closed", "DRN", "FLT 42s", "P95", "LAG", "610ms", "rpcdash", "demo load 20/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("80×24 lacks %q:\n%s", want, got)
		}
	}
}

func checkFits(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		t.Errorf("%d lines for a %d-row terminal", len(lines), h)
	}
	for i, l := range lines {
		if lipgloss.Width(l) > w {
			t.Errorf("line %d is %d cells wide on %d columns: %q", i, lipgloss.Width(l), w, l)
		}
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if updating() {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ui -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test ./ui -run Golden -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// An endpoint flagged ahead (its head beyond the pool's pace) says so in
// its badges, and the detail gives the reason, as for every exclusion.
func TestView_AheadExclusionIsNamedWithItsReason(t *testing.T) {
	s := healthySnapshot()
	ep := &s.Endpoints[0]
	ep.Routable, ep.Head = false, 22_000_000
	const why = "head 22000000 is 1000000 blocks beyond the pool's pace (pool head 21000000 seen 0s ago, 0.083 blocks/s, chain.max_head_lag 5): not the pool's head until another endpoint confirms it"
	ep.Exclusions = []string{engine.ExcludeAhead + ": " + why}
	s.Routable--
	for _, size := range [][2]int{{160, 48}, {80, 24}} {
		got := fixedModel(s, themes.Default(), size[0], size[1]).View()
		if !strings.Contains(got, "AHEAD") || strings.Contains(got, "EXCLUDED") {
			t.Errorf("%d×%d: want the badge AHEAD and not EXCLUDED:\n%s", size[0], size[1], got)
		}
	}
	detail := strings.Join(fixedModel(s, themes.Default(), 160, 48).detailLines(200), "\n")
	if !strings.Contains(detail, "excluded: ahead: head 22000000 is 1000000 blocks beyond the pool's pace") {
		t.Errorf("detail lacks the reason:\n%s", detail)
	}
}

// A flapping breaker says so in the endpoint's detail.
func TestView_FlappingBreakerShowsInTheDetail(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[0].Breaker = engine.BreakerSnapshot{State: engine.BreakerOpen, Cooldown: 40 * time.Second,
		OpenedAt: t0.Add(-5 * time.Second), NextTrialAt: t0.Add(35 * time.Second), Flaps: 2}
	detail := strings.Join(fixedModel(s, themes.Default(), 160, 48).detailLines(200), "\n")
	if !strings.Contains(detail, "(cooldown 40s, reopened 0×, flapping 2×)") {
		t.Errorf("detail lacks the flapping count:\n%s", detail)
	}
	s.Endpoints[0].Breaker.Flaps = 0
	if detail := strings.Join(fixedModel(s, themes.Default(), 160, 48).detailLines(200), "\n"); strings.Contains(detail, "flapping") {
		t.Errorf("a breaker that does not flap is called flapping:\n%s", detail)
	}
}
