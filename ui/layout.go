package ui

// The console is laid out for 100×30 and wider and degrades by explicit
// rules, in this order, down to 80×24:
//  1. panel borders go (below 100 columns or 30 rows), and with them the
//     focused panel's "▶ Title": its column-header line starts with ▶;
//  2. the detail pane moves behind enter (below 150 columns or 40 rows);
//  3. the independence column collapses to a one-cell flag (below 120
//     columns);
//  4. the endpoint table gives way by sparkSteps: the sparkline shortens
//     to 30 cells, then provider and head go, then it shortens to 20 and
//     10, then hedge wins, 429 %, p50 and error % go; the sparkline then
//     takes whatever room the columns that went leave.
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
	// the user's) must cost the sparkline cells before it costs P50.
	for _, step := range sparkSteps {
		l.sparkWidth = step.width
		if cols := fitColumnsUpTo(m.allEndpointColumns(l), l.content, step.drops); rowWidth(cols) <= l.content || step.drops == maxDrop {
			// The columns that go are chosen at this length; the
			// sparkline then takes what room they leave.
			others := rowWidth(cols) - step.width
			for _, sw := range sparkWidths {
				if others+sw <= l.content {
					l.sparkWidth = sw
					break
				}
			}
			break
		}
	}
	return l
}

// sparkSteps say how the endpoint table gives way: the sparkline's length,
// and up to which rank of optional columns may have gone at it (1
// provider, 2 head: LAG says what matters of it; 3 hedge wins, 4 429 %, 5
// p50, 6 error %). Provider and head go before the sparkline is shorter
// than 30 cells (30 s of RTT is what an incident needs on screen), the
// others only once it is at its shortest.
var sparkSteps = []struct{ width, drops int }{{60, 0}, {30, 0}, {30, 2}, {20, 2}, {10, 2}, {10, maxDrop}}

const maxDrop = 6

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
