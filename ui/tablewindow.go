package ui

import (
	"fmt"
	"strings"
)

// tableWindow is the part of a table of total rows that n lines show,
// the cursor's row among them: shown rows from start. When they do not
// all fit, cut: the last line is given to saying how many are out of sight.
func tableWindow(total, cursor, n int) (start, shown int, cut bool) {
	if total <= n || n < 2 {
		shown = min(total, max(n, 0))
		return window(total, cursor, shown), shown, false
	}
	return window(total, cursor, n-1), n - 1, true
}

// outOfSight is a table's last line when rows are out of sight above and
// below the panel, note saying what matters of them.
func (m Model) outOfSight(above, below int, note string, width int) string {
	var where []string
	if above > 0 {
		where = append(where, fmt.Sprintf("↑ %d more above", above))
	}
	if below > 0 {
		where = append(where, fmt.Sprintf("↓ %d more below", below))
	}
	return m.styles.faint.Render(fit("  "+strings.Join(where, " · ")+note+" (j/k)", width))
}

// window is the first row shown so that cursor is visible in n rows.
func window(total, cursor, n int) int {
	if n <= 0 || total <= n {
		return 0
	}
	return clamp(cursor-n+1, 0, total-n)
}
