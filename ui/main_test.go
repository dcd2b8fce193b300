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
	// teatest leaves one goroutine per test model waiting for a SIGINT
	// that never comes (its own signal watcher); everything else must end.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"))
}
