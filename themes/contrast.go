package themes

import (
	"fmt"
	"math"
	"strconv"
)

// MinContrast is WCAG 2's AA contrast for text: the console's header
// items reach it against the header bar whatever colours a theme gives.
const MinContrast = 4.5

// RGB is a colour's red, green and blue, 0-255: "#rrggbb" as written, an
// ANSI number as xterm draws it (0-15 are the terminal's own; xterm's
// defaults stand for them). ok is false for anything else.
func RGB(c string) (r, g, b uint8, ok bool) {
	if colorRe.MatchString(c) {
		v, _ := strconv.ParseUint(c[1:], 16, 32)
		return uint8(v >> 16), uint8(v >> 8), uint8(v), true
	}
	n, err := strconv.Atoi(c)
	switch {
	case err != nil || n < 0 || n > 255:
		return 0, 0, 0, false
	case n < 16:
		v := xterm16[n]
		return v[0], v[1], v[2], true
	case n < 232:
		n -= 16
		level := func(i int) uint8 {
			if i == 0 {
				return 0
			}
			return uint8(55 + 40*i)
		}
		return level(n / 36), level(n / 6 % 6), level(n % 6), true
	}
	v := uint8(8 + 10*(n-232))
	return v, v, v, true
}

var xterm16 = [16][3]uint8{{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0}, {0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
	{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255}}

// luminance is WCAG 2's relative luminance.
func luminance(r, g, b uint8) float64 {
	lin := func(v uint8) float64 {
		c := float64(v) / 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// Contrast is WCAG 2's contrast ratio of two colours, 1 to 21 (0 when
// either is not a colour).
func Contrast(a, b string) float64 {
	ar, ag, ab, ok1 := RGB(a)
	br, bg, bb, ok2 := RGB(b)
	if !ok1 || !ok2 {
		return 0
	}
	la, lb := luminance(ar, ag, ab), luminance(br, bg, bb)
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
	r, g, b, ok := RGB(fg)
	if !ok {
		return fg
	}
	target := uint8(0)
	if Contrast("#ffffff", bg) > Contrast("#000000", bg) {
		target = 255
	}
	mix := func(v uint8, t float64) uint8 { return uint8(math.Round(float64(v) + (float64(target)-float64(v))*t)) }
	for i := 1; i <= 20; i++ {
		t := float64(i) / 20
		c := fmt.Sprintf("#%02x%02x%02x", mix(r, t), mix(g, t), mix(b, t))
		if Contrast(c, bg) >= minimum {
			return c
		}
	}
	return fmt.Sprintf("#%02x%02x%02x", target, target, target)
}
