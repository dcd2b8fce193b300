package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/rpcdash/rpcdash/themes"
)

// Header items wrap between items, never inside one: at every width from
// 80 columns the header's words are the words of one long line. Seen at
// 80×24 attached to an instance that stopped: the STALE item (85 cells
// with its padded error and "· reconnecting") was wider than the line
// and was wrapped mid-word, "· reconne" / "cting".
func TestView_HeaderWrapsBetweenItemsNeverMidWord(t *testing.T) {
	words := func(m Model) []string {
		var ws []string
		for _, l := range m.headerLines() {
			ws = append(ws, strings.Fields(ansi.Strip(l))...)
		}
		return ws
	}
	states := map[string]func(m *Model){
		"live": func(m *Model) {},
		"frozen": func(m *Model) {
			m.frozen, m.frozenAt = true, fixedNow().Add(-12*time.Second)
		},
		"stale, attached": func(m *Model) {
			m.opts.Source = Source{Attached: "http://127.0.0.1:8546"}
			// What the remote backend says when the instance is gone.
			m.fetchErr, m.staleFrom = errorString("http://127.0.0.1:38546 unreachable: connection refused"), fixedNow().Add(-8*time.Second)
		},
		"stale, long error": func(m *Model) {
			m.opts.Source = Source{Attached: "http://127.0.0.1:8546"}
			m.fetchErr, m.staleFrom = errorString(`Get "http://127.0.0.1:8546/v1/status": dial tcp 127.0.0.1:8546: connect: connection refused`), fixedNow().Add(-8*time.Second)
		},
	}
	// In colour, as on a terminal: lipgloss wraps styled text otherwise
	// than plain (colour off, the old header happened to break at a space).
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for name, set := range states {
		wide := fixedModel(incidentSnapshot(), themes.Default(), 1000, 40)
		set(&wide)
		want := words(wide)
		for w := 80; w <= 200; w++ {
			m := fixedModel(incidentSnapshot(), themes.Default(), w, 40)
			set(&m)
			if got := words(m); !slices.Equal(got, want) {
				t.Errorf("%s, %d columns: header words\n%q\nwant those of one line\n%q\n%s", name, w, got, want, ansi.Strip(strings.Join(m.headerLines(), "\n")))
			}
			if strings.HasPrefix(name, "stale") && !strings.Contains(ansi.Strip(strings.Join(m.headerLines(), "\n")), "STALE 8s") {
				t.Errorf("%s, %d columns: no STALE 8s", name, w)
			}
		}
	}
}
