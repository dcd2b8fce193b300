package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// optionalColumns are the endpoint table's columns that may give way, in
// the order they do.
var optionalColumns = []string{"PROVIDER/REGION", "HEAD", "WINS", "429%", "P50", "ERR%"}

// A 50-character endpoint name (names are the user's) widens the ENDPOINT
// column to its cap: widening the terminal from 120×36 to 150×40 lengthened
// the sparkline (30 → 60 cells) and so dropped P50 and 429 %. The
// sparkline gives way first: at both sizes P50, 429 % and hedge wins stay
// (provider and head go for a 20-cell sparkline at 120), and 150 columns
// show at least what 120 do.
func TestView_LongEndpointNameShortensTheSparklineBeforeColumnsGo(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[1].Name = strings.Repeat("x", 50)
	head := func(w, h int) string {
		m := fixedModel(s, themes.Default(), w, h)
		got := m.View()
		checkFits(t, got, w, h)
		checkSparkGivesWayFirst(t, m)
		return lineWith(got, "BADGES")
	}
	at120, at150 := head(120, 36), head(150, 40)
	for _, c := range []string{"P50", "P95", "LAG", "ERR%", "429%", "WINS", "INDEP"} {
		if !strings.Contains(at120, c) {
			t.Errorf("120×36 lacks %s: %q", c, at120)
		}
	}
	for _, c := range append(optionalColumns, "P95", "LAG", "INDEP") {
		if strings.Contains(at120, c) && !strings.Contains(at150, c) {
			t.Errorf("150×40 lost %s that 120×36 shows:\n120: %q\n150: %q", c, at120, at150)
		}
	}
}

// At every size from 80 to 200 columns, with short, capped and overlong
// names: provider and head go only once the sparkline is 30 cells or
// shorter, hedge wins, 429 %, p50 and error % only once it is 10; and the
// sparkline is the longest beside which the columns shown fit (no room
// left idle).
func TestView_OptionalColumnsGoOnlyAfterTheSparklineIsShortest(t *testing.T) {
	for _, name := range []string{"a", strings.Repeat("n", 16), strings.Repeat("x", 50)} {
		for _, h := range []int{24, 40} {
			for w := 80; w <= 200; w++ {
				s := healthySnapshot()
				s.Endpoints[0].Name = name
				m := fixedModel(s, themes.Default(), w, h)
				t.Run(fmt.Sprintf("%d-char/%dx%d", len(name), w, h), func(t *testing.T) {
					checkSparkGivesWayFirst(t, m)
				})
			}
		}
	}
}

func checkSparkGivesWayFirst(t *testing.T, m Model) {
	t.Helper()
	head := lineWith(m.View(), "BADGES")
	l := m.layout()
	for i, c := range optionalColumns {
		limit := 10
		if i < 2 { // provider, head
			limit = 30
		}
		if !strings.Contains(head, c) && l.sparkWidth > limit {
			t.Errorf("%s is gone beside a %d-cell sparkline: %q", c, l.sparkWidth, head)
		}
	}
	shown := columnTitles(m.endpointColumns(l))
	if next, ok := map[int]int{10: 20, 20: 30, 30: 60}[l.sparkWidth]; ok {
		longer := l
		longer.sparkWidth = next
		if columnTitles(m.endpointColumns(longer)) == shown {
			t.Errorf("a %d-cell sparkline fits the same columns, the layout took %d: %q", next, l.sparkWidth, head)
		}
	}
}

func columnTitles[T any](cols []column[T]) string {
	var out []string
	for _, c := range cols {
		if !strings.HasPrefix(c.title, "RTT") {
			out = append(out, c.title)
		}
	}
	return strings.Join(out, "|")
}
