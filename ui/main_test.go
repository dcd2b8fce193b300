package ui

import (
	"os"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Goldens and flows compare text: colour off, as NO_COLOR does.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Setenv("TZ", "UTC")
	goleak.VerifyTestMain(m)
}
