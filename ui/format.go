package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
)

// Numbers are printed in fixed widths, right-aligned, so that nothing on
// screen moves between ticks; a missing figure is "—".

const dash = "—"

// fmtMS prints a latency in milliseconds in 6 cells ("  45ms", " 1.2s ").
// The unit is chosen by the figure as rounded, so that it is at most 5
// cells and a "≥" or "b" before it still fits: 999.7ms is "1.00s", not
// "1000ms", which "≥" cut to "≥1000m".
func fmtMS(d time.Duration) string {
	switch {
	case d <= 0:
		return pad(dash, 6)
	case d < 9950*time.Microsecond:
		return pad(fmt.Sprintf("%.1fms", float64(d)/1e6), 6)
	case d < 999500*time.Microsecond:
		return pad(fmt.Sprintf("%.0fms", float64(d)/1e6), 6)
	case d < 9995*time.Millisecond:
		return pad(fmt.Sprintf("%.2fs", d.Seconds()), 6)
	default:
		return pad(fmt.Sprintf("%.0fs", d.Seconds()), 6)
	}
}

// boundMS is fmtMS with "≥" before a figure that is only a lower bound
// (censoring: the attempts past it were cut short), in the same 6 cells
// ("≥312ms", "≥1.2s").
func boundMS(d time.Duration, lower bool) string {
	if !lower || d <= 0 {
		return fmtMS(d)
	}
	return pad(boundText(d, true), 6)
}

// fmtPct prints a share as a percentage in 5 cells (" 4.2%", "  0% ").
func fmtPct(v float64, have bool) string {
	if !have {
		return pad(dash, 5)
	}
	return pad(pctText(v), 5)
}

// fmtRate prints requests per second in 6 cells. A rate that rounds to
// 0.0 but is not 0 (one request in the last minute) is "<0.1": "0.0" read
// as no traffic at all.
func fmtRate(v float64) string {
	switch {
	case v <= 0:
		return pad("0", 6)
	case v < 0.05:
		return pad("<0.1", 6)
	case v < 10:
		return pad(fmt.Sprintf("%.1f", v), 6)
	default:
		return pad(fmt.Sprintf("%.0f", v), 6)
	}
}

// fmtSpan prints a fault's duration ("5s", "30s", "1m", "2m30s").
func fmtSpan(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmtAge(d)
}

// fmtAge prints a duration as a short age in at most 6 cells ("3s",
// "2m05s", "1h02m", "7d02h"): a serve up for a week read "168h0…" in the
// header's 6 cells.
func fmtAge(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 100*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d < 100*24*time.Hour:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	default:
		return fmt.Sprintf("%dd", int(d.Hours())/24)
	}
}

// fmtAgeCoarse is fmtAge in at most 3 cells, rounded down to the unit:
// "12s", "2m" (2m59s), "3h", "4d".
func fmtAgeCoarse(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 100*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", min(int(d.Hours()/24), 999))
}

// fmtLeft prints time left, rounded up: a fault with 41.8 s to go shows
// 42s, and 0s only once it is over.
func fmtLeft(d time.Duration) string {
	return fmtAge((d + time.Second - 1).Truncate(time.Second))
}

// fmtLeftCoarse is fmtLeft in at most 3 cells, rounded up to the unit:
// "42s", "2m" (1m58s), "3h".
func fmtLeftCoarse(d time.Duration) string {
	switch {
	case d <= 59*time.Second:
		return fmtLeft(d)
	case d <= time.Hour:
		return fmt.Sprintf("%dm", int((d+time.Minute-1)/time.Minute))
	case d <= 99*time.Hour:
		return fmt.Sprintf("%dh", int((d+time.Hour-1)/time.Hour))
	}
	return fmt.Sprintf("%dd", int((d+24*time.Hour-1)/(24*time.Hour)))
}

// fmtDelay prints a hedge delay compactly ("120ms", "1.5s"), in at most 6
// cells: the unit and decimals follow the figure as rounded (99.97ms is
// "100ms", not "100.0ms", which the DELAY column cut to "100.0m").
func fmtDelay(d time.Duration) string {
	switch {
	case d < 0: // engine.AutoDelay; 0 is a real delay (duplicate at once)
		return "auto"
	case d < 99950*time.Microsecond && d%time.Millisecond != 0:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	case d < 999500*time.Microsecond:
		return fmt.Sprintf("%.0fms", float64(d)/1e6)
	default:
		return strings.TrimSuffix(fmt.Sprintf("%.2f", d.Seconds()), "0") + "s"
	}
}

// quantileLabel names a quantile as a percentile, "p95", "p97.5",
// "p99.9": rounded to a whole one, 0.999 read p100 and 0.975 p98.
func quantileLabel(q float64) string {
	return "p" + strings.TrimSuffix(engine.ShareLabel(q), "%")
}

// pad right-aligns s in w cells (cut when longer).
func pad(s string, w int) string {
	n := lipgloss.Width(s)
	if n >= w {
		return ansi.Truncate(s, w, "")
	}
	return strings.Repeat(" ", w-n) + s
}

// fit left-aligns s in exactly w cells, cutting with "…".
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := lipgloss.Width(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// fitName is fit for a name, cut in its middle: names of one pool often
// differ only at their end (alchemy-mainnet-1, alchemy-mainnet-2), which a
// cut at the end made two rows read the same.
func fitName(s string, w int) string {
	n := lipgloss.Width(s)
	if n <= w || w < 3 {
		return fit(s, w)
	}
	tail := (w - 1) / 2
	return ansi.Truncate(s, w-1-tail, "") + "…" + ansi.TruncateLeft(s, n-tail, "")
}
