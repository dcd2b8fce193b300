package ui

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// badge is one of an endpoint's states in the BADGES column: its words,
// its narrow form (the same words when it has none) and its colour.
type badge struct {
	long, abbr string
	st         lipgloss.Style
}

// fitBadges chooses the words of bs (most urgent first) in width cells:
// as many badges as fit, the rest counted ("+2", never cut mid-word: the
// detail names them all), and of those shown the fewest in their narrow
// form, the least urgent first. Narrowing from the end one by one turned
// "FAULT error 45s DRAINED" into "FLT 45s DRN" where "FLT 45s DRAINED"
// fits.
func fitBadges(bs []badge, width int) (words []string, more string) {
	for shown := len(bs); shown >= 1; shown-- {
		more = ""
		if shown < len(bs) {
			more = fmt.Sprintf(" +%d", len(bs)-shown)
		}
		if words, ok := narrowFewest(bs[:shown], width-lipgloss.Width(more)); ok || shown == 1 {
			return words, more
		}
	}
	return nil, ""
}

// narrowFewest is the words of bs in width cells with the fewest badges
// narrowed; among as few, the least urgent ones (a set is weighed with
// the most urgent badge as its highest bit). Every badge narrow when
// none fits (ok false).
func narrowFewest(bs []badge, width int) (words []string, ok bool) {
	n := len(bs)
	text := func(narrow uint) []string {
		out := make([]string, n)
		for i, b := range bs {
			out[i] = b.long
			if narrow&(1<<(n-1-i)) != 0 {
				out[i] = b.abbr
			}
		}
		return out
	}
	fits := func(ws []string) bool { return lipgloss.Width(strings.Join(ws, " ")) <= width }
	if ws := text(0); fits(ws) {
		return ws, true
	}
	best, found := uint(0), false
	for set := uint(1); set < 1<<n; set++ {
		if !fits(text(set)) {
			continue
		}
		if !found || bits.OnesCount(set) < bits.OnesCount(best) || bits.OnesCount(set) == bits.OnesCount(best) && set < best {
			best, found = set, true
		}
	}
	if !found {
		return text(1<<n - 1), false
	}
	return text(best), true
}
