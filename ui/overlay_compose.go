package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// overlayOnto draws box centred over the rows lines of back (width cells
// wide): the lines above and below the box stay in sight, the rows it
// covers are blank beside it (the panels' cut edges only said noise). A
// menu or a confirmation drawn over an empty screen hid the pool the
// operator was acting on, in the middle of an incident (console audit,
// stop 56).
func overlayOnto(back, box string, width, rows int) string {
	under := strings.Split(back, "\n")
	for len(under) < rows {
		under = append(under, "")
	}
	under = under[:rows]
	over := strings.Split(box, "\n")
	if len(over) > rows {
		over = over[:rows]
	}
	top := (rows - len(over)) / 2
	margin := strings.Repeat(" ", max((width-lipgloss.Width(box))/2, 0))
	for i, line := range over {
		under[top+i] = margin + line
	}
	return strings.Join(under, "\n")
}
