package ui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/rpcdash/rpcdash/themes"
)

// cell is one character of a rendered line with the colours it is drawn
// in ("" when the terminal's default).
type cell struct {
	r      rune
	fg, bg string
}

var sgrRe = regexp.MustCompile(`^\x1b\[([0-9;]*)m`)

// cells reads a true-colour line into its characters and their colours.
func cells(t *testing.T, line string) []cell {
	t.Helper()
	var out []cell
	fg, bg := "", ""
	for len(line) > 0 {
		if m := sgrRe.FindStringSubmatch(line); m != nil {
			ps := strings.Split(m[1], ";")
			for i := 0; i < len(ps); i++ {
				switch ps[i] {
				case "", "0":
					fg, bg = "", ""
				case "39":
					fg = ""
				case "49":
					bg = ""
				case "38", "48":
					if i+4 >= len(ps) || ps[i+1] != "2" {
						t.Fatalf("not a true-colour SGR: %q", m[0])
					}
					var rgb [3]int
					for j := range 3 {
						rgb[j], _ = strconv.Atoi(ps[i+2+j])
					}
					c := fmt.Sprintf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2])
					if ps[i] == "38" {
						fg = c
					} else {
						bg = c
					}
					i += 4
				}
			}
			line = line[len(m[0]):]
			continue
		}
		r := []rune(line)[0]
		out = append(out, cell{r: r, fg: fg, bg: bg})
		line = line[len(string(r)):]
	}
	return out
}

// hex is a theme colour as the terminal gets it in true colour.
func hex(c string) string {
	r, g, b, _ := themes.RGB(c)
	return fmt.Sprintf("#%02x%02x%02x", r, g, b)
}

// sameColour: a and b differ by at most 1 in each channel (termenv's
// conversion rounds #e4e4e4 to #e3e3e3).
func sameColour(a, b string) bool {
	ar, ag, ab, ok1 := themes.RGB(a)
	br, bg, bb, ok2 := themes.RGB(b)
	near := func(x, y uint8) bool { return x-y <= 1 || y-x <= 1 }
	return ok1 && ok2 && near(ar, br) && near(ag, bg) && near(ab, bb)
}

// The header is one bar: every cell of its lines on header_bg (FROZEN and
// STALE on the banner's own), and every character's colour at least
// themes.MinContrast against what it is drawn on. Each coloured item ended
// in a full reset, so the text after it fell back to the terminal's
// background (the bar was patchy); and with --theme contrast, "hedging OFF"
// was #f0e442 on the white bar, 1.3:1 (error 2.2:1, accent 2.3:1, faint
// 1.9:1).
func TestView_HeaderIsOneBarReadableInEveryTheme(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	states := map[string]func(m *Model){
		"incident": func(m *Model) {},
		"hedging off": func(m *Model) {
			m.snap.Hedge.Enabled = false
		},
		"paused, frozen": func(m *Model) {
			m.snap.Hedge.Paused = true
			m.frozen, m.frozenAt = true, fixedNow().Add(-12*time.Second)
		},
		"stale, attached": func(m *Model) {
			m.opts.Source = Source{Attached: "http://127.0.0.1:8546"}
			m.fetchErr, m.staleFrom = errUnreachable, fixedNow().Add(-8*time.Second)
		},
	}
	for _, tn := range themes.Names() {
		th, _ := themes.Load(tn)
		bar, banner := hex(th.Color(themes.HeaderBg)), hex(th.Color(themes.BannerBg))
		for name, set := range states {
			for _, w := range []int{80, 120, 160} {
				m := fixedModel(incidentSnapshot(), th, w, 40)
				set(&m)
				lines := m.headerLines()
				if plain := lipgloss.Width(strings.Join(lines, "")); plain != w*len(lines) {
					t.Errorf("%s, %s, %d: header lines are %d cells, want %d", tn, name, w, plain, w*len(lines))
				}
				for i, l := range lines {
					for _, c := range cells(t, l) {
						if !sameColour(c.bg, bar) && !sameColour(c.bg, banner) {
							t.Errorf("%s, %s, %d: line %d: %q drawn on %q, not the bar's %s:\n%q", tn, name, w, i, c.r, c.bg, bar, l)
							break
						}
						if c.r == ' ' {
							continue
						}
						if ratio := themes.Contrast(c.fg, c.bg); ratio < themes.MinContrast {
							t.Errorf("%s, %s, %d: line %d: %q in %q on %s: contrast %.2f:1, want at least %.1f:1", tn, name, w, i, c.r, c.fg, c.bg, ratio, themes.MinContrast)
							break
						}
					}
				}
			}
		}
	}
}
