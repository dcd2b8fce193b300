package ui

// The console is laid out for 100×30 and wider and degrades by explicit
// rules, in this order, down to 80×24:
//  1. panel borders go (below 100 columns or 30 rows), and with them the
//     focused panel's "▶ Title": its column-header line starts with ▶;
//  2. the detail pane moves behind enter (below 150 columns or 40 rows);
//  3. the independence column collapses to a one-cell flag (below 120
//     columns);
//  4. sparklines shorten (60, 30, 20, then 10 cells), then optional columns
//     go (provider, head, hedge wins, 429 %, p50, error %): the sparkline
//     is the longest beside which every column fits, else 10 cells.
// The status line and each endpoint's name, state word, badges, p95 and lag
// never go. Below 80×24 the console says so instead.

const (
	minWidth, minHeight       = 80, 24
	bordersWidth, bordersRows = 100, 30
	detailWidth, detailRows   = 150, 40
	independenceWidth         = 120
)

type layout struct {
	borders      bool
	inlineDetail bool
	fullIndep    bool // the independence column in words, not a flag
	sparkWidth   int
	content      int // usable columns inside a panel
}

func (m Model) layout() layout {
	w, h := m.width, m.height
	l := layout{
		borders:      m.bordered(),
		inlineDetail: w >= detailWidth && h >= detailRows,
		fullIndep:    w >= independenceWidth,
	}
	l.content = w
	if l.borders {
		l.content = w - 2
	}
	// The sparkline's length follows the room the other columns leave,
	// not the terminal's width alone: an endpoint's long name (names are
	// the user's) must cost the sparkline cells before it costs a column.
	l.sparkWidth = 0
	others := rowWidth(m.allEndpointColumns(l))
	l.sparkWidth = sparkWidths[len(sparkWidths)-1]
	for _, sw := range sparkWidths {
		if others+sw <= l.content {
			l.sparkWidth = sw
			break
		}
	}
	return l
}

// sparkWidths are the sparkline's lengths in cells, longest first.
var sparkWidths = []int{60, 30, 20, 10}

func (m Model) sparkWidth() int { return m.layout().sparkWidth }

// bordered: the panels have frames, whose titles mark the focused panel.
func (m Model) bordered() bool { return m.width >= bordersWidth && m.height >= bordersRows }

// marksFocus says whether panel f's column-header line carries the focus
// marker ▶: it has the keys and there is no frame to say so. The marker
// takes the place of blanks, so it costs no row and moves no column.
func (m Model) marksFocus(f focus) bool { return m.focus == f && !m.bordered() }

// cursor is a table's row cursor: in the accent colour in the panel the
// keys go to, faint in the others.
func (m Model) cursor(f focus) string {
	if m.focus == f {
		return m.styles.accent.Render("▸")
	}
	return m.styles.faint.Render("▸")
}
