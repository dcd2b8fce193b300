package themes

import (
	"strconv"

	"github.com/lucasb-eyer/go-colorful"
	"github.com/muesli/termenv"
)

// MinContrast is WCAG 2's AA contrast for text: the console's header
// items reach it against the header bar whatever colours a theme gives.
const MinContrast = 4.5

// RGB is a colour's red, green and blue, 0-255: "#rrggbb" as written, an
// ANSI number as termenv converts it when it downsamples (0-15 are the
// terminal's own; termenv's table stands for them). ok is false for
// anything else.
func RGB(c string) (r, g, b uint8, ok bool) {
	col, ok := rgb(c)
	if !ok {
		return 0, 0, 0, false
	}
	r, g, b = col.RGB255()
	return r, g, b, true
}

func rgb(c string) (colorful.Color, bool) {
	if !colorRe.MatchString(c) {
		// termenv indexes its table without a bound check.
		if n, err := strconv.Atoi(c); err != nil || n < 0 || n > 255 {
			return colorful.Color{}, false
		}
	}
	return termenv.ConvertToRGB(termenv.TrueColor.Color(c)), true
}

// luminance is WCAG 2's relative luminance.
func luminance(c colorful.Color) float64 {
	r, g, b := c.LinearRgb()
	return 0.2126*r + 0.7152*g + 0.0722*b
}

// Contrast is WCAG 2's contrast ratio of two colours, 1 to 21 (0 when
// either is not a colour).
func Contrast(a, b string) float64 {
	ca, ok1 := rgb(a)
	cb, ok2 := rgb(b)
	if !ok1 || !ok2 {
		return 0
	}
	la, lb := luminance(ca), luminance(cb)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// Readable is fg as it can be written on bg: fg itself when their contrast
// is at least minimum, else fg moved toward black or white (whichever bg
// contrasts with more) just far enough. Its hue stays, so a warning still
// reads as one; black or white on any background reach 4.58:1.
func Readable(fg, bg string, minimum float64) string {
	if Contrast(fg, bg) >= minimum {
		return fg
	}
	c, ok := rgb(fg)
	if !ok {
		return fg
	}
	target := colorful.Color{}
	if Contrast("#ffffff", bg) > Contrast("#000000", bg) {
		target = colorful.Color{R: 1, G: 1, B: 1}
	}
	for i := 1; i <= 20; i++ {
		moved := c.BlendRgb(target, float64(i)/20).Hex()
		if Contrast(moved, bg) >= minimum {
			return moved
		}
	}
	return target.Hex()
}
