package ui

import (
	"github.com/charmbracelet/lipgloss"

	"github.com/rpcdash/rpcdash/themes"
)

// styles are the theme turned into Lip Gloss styles, in this one place.
type styles struct {
	text, faint, accent, ok, warn, err lipgloss.Style
	header, banner, selected, title    lipgloss.Style
	closed, half, open                 lipgloss.Style
	drained, fault, spark, sparkFail   lipgloss.Style
	overlay                            lipgloss.Style
	border, borderFocus                lipgloss.Color
	// hdr are the header's items: on the bar's background, each colour as
	// readable there as themes.MinContrast asks.
	hdr headerStyles
}

type headerStyles struct {
	text, faint, accent, warn, err lipgloss.Style
}

func newStyles(t themes.Theme) styles {
	c := func(r themes.Role) lipgloss.Color { return lipgloss.Color(t.Color(r)) }
	fg := func(r themes.Role) lipgloss.Style { return lipgloss.NewStyle().Foreground(c(r)) }
	s := styles{
		text: fg(themes.Text), faint: fg(themes.Faint), accent: fg(themes.Accent).Bold(true),
		ok: fg(themes.OK), warn: fg(themes.Warn).Bold(true), err: fg(themes.Error).Bold(true),
		header:   lipgloss.NewStyle().Foreground(c(themes.HeaderFg)).Background(c(themes.HeaderBg)),
		banner:   lipgloss.NewStyle().Foreground(c(themes.BannerFg)).Background(c(themes.BannerBg)).Bold(true),
		selected: lipgloss.NewStyle().Foreground(c(themes.SelectedFg)).Background(c(themes.SelectedBg)),
		title:    fg(themes.Accent).Bold(true),
		closed:   fg(themes.BreakerClosed), half: fg(themes.BreakerHalf).Bold(true), open: fg(themes.BreakerOpen).Bold(true),
		drained: fg(themes.Drained).Bold(true), fault: fg(themes.Fault).Bold(true),
		spark: fg(themes.Spark), sparkFail: fg(themes.SparkFail).Bold(true),
		border: c(themes.Border), borderFocus: c(themes.BorderFocus),
	}
	s.overlay = lipgloss.NewStyle().Border(lipgloss.DoubleBorder()).BorderForeground(s.borderFocus).Padding(0, 1)
	bar := t.Color(themes.HeaderBg)
	onBar := func(r themes.Role) lipgloss.Style {
		return lipgloss.NewStyle().Foreground(lipgloss.Color(themes.Readable(t.Color(r), bar, themes.MinContrast))).Background(lipgloss.Color(bar))
	}
	s.hdr = headerStyles{text: onBar(themes.HeaderFg), faint: onBar(themes.Faint), accent: onBar(themes.Accent).Bold(true),
		warn: onBar(themes.Warn).Bold(true), err: onBar(themes.Error).Bold(true)}
	return s
}
