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
// sparkline gives way first: at both sizes every column but the provider
// fits beside a 10-cell one, and 150 columns show at least what 120 do.
func TestView_LongEndpointNameShortensTheSparklineBeforeColumnsGo(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[1].Name = strings.Repeat("x", 50)
	head := func(w, h int) string {
		got := fixedModel(s, themes.Default(), w, h).View()
		checkFits(t, got, w, h)
		return lineWith(got, "BADGES")
	}
	at120, at150 := head(120, 36), head(150, 40)
	for _, c := range []string{"P50", "P95", "LAG", "ERR%", "429%", "WINS", "HEAD", "INDEP"} {
		if !strings.Contains(at120, c) {
			t.Errorf("120×36 lacks %s: %q", c, at120)
		}
	}
	for _, c := range append(optionalColumns, "P95", "LAG", "INDEP") {
		if strings.Contains(at120, c) && !strings.Contains(at150, c) {
			t.Errorf("150×40 lost %s that 120×36 shows:\n120: %q\n150: %q", c, at120, at150)
		}
	}
	for _, h := range []string{at120, at150} {
		checkSparkGivesWayFirst(t, h)
	}
}

// At every size from 80 to 200 columns, with short, capped and overlong
// names: an optional column is gone only if the sparkline is at its
// shortest, 10 cells; otherwise the sparkline is as long as fits.
func TestView_OptionalColumnsGoOnlyAfterTheSparklineIsShortest(t *testing.T) {
	for _, name := range []string{"a", strings.Repeat("n", 16), strings.Repeat("x", 50)} {
		for _, h := range []int{24, 40} {
			for w := 80; w <= 200; w++ {
				s := healthySnapshot()
				s.Endpoints[0].Name = name
				m := fixedModel(s, themes.Default(), w, h)
				head := lineWith(m.View(), "BADGES")
				t.Run(fmt.Sprintf("%d-char/%dx%d", len(name), w, h), func(t *testing.T) {
					checkSparkGivesWayFirst(t, head)
					if l := m.layout(); l.sparkWidth < 60 {
						// One step longer would not have fitted every column.
						l.sparkWidth = map[int]int{10: 20, 20: 30, 30: 60}[l.sparkWidth]
						if cols := m.endpointColumns(l); len(cols) == 14 {
							t.Errorf("a %d-cell sparkline fits every column, the layout took %d: %q", l.sparkWidth, m.layout().sparkWidth, head)
						}
					}
				})
			}
		}
	}
}

func checkSparkGivesWayFirst(t *testing.T, head string) {
	t.Helper()
	if !strings.Contains(head, "RTT ") {
		t.Fatalf("no endpoints header: %q", head)
	}
	for _, c := range optionalColumns {
		if !strings.Contains(head, c) && !strings.Contains(head, "RTT 10s") {
			t.Errorf("%s is gone while the sparkline is longer than 10 cells: %q", c, head)
		}
	}
}
