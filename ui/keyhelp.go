package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// keyGrid draws the help's key groups, one column each, side by side as
// many as fit in width and the rest on further rows: the help bubble's
// full view puts them on one row and cuts what does not fit behind "…",
// which hid freeze, filter and quit at every size.
func (m Model) keyGrid(groups [][]key.Binding, width int) string {
	const gap = "    "
	var rows, row []string
	rowW := 0
	for _, g := range groups {
		var keys, descs []string
		for _, b := range g {
			if b.Enabled() {
				keys = append(keys, m.styles.accent.Render(b.Help().Key))
				descs = append(descs, m.styles.text.Render(b.Help().Desc))
			}
		}
		if len(keys) == 0 {
			continue
		}
		col := lipgloss.JoinHorizontal(lipgloss.Top, strings.Join(keys, "\n"), " ", strings.Join(descs, "\n"))
		w := lipgloss.Width(col)
		if len(row) > 0 && rowW+len(gap)+w > width {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowW = nil, 0
		}
		if len(row) > 0 {
			row, rowW = append(row, gap), rowW+len(gap)
		}
		row, rowW = append(row, col), rowW+w
	}
	if len(row) > 0 {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	}
	return strings.Join(rows, "\n\n")
}
