package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/ui"
)

// A theme file that does not load falls back to dark "with a warning":
// the warning went to stderr just before the console took the screen, so
// the operator saw it only after quitting (seen with --theme pointing at a
// file missing its [roles]). The console's status line says it.
func TestConsole_AThemeThatFellBackSaysSoOnScreen(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("text = \"#zzzzzz\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	theme, warning := pickTheme(bad, "", slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if !strings.Contains(warning, "using the dark theme") {
		t.Fatalf("warning %q", warning)
	}
	m, _ := consoleModel(ui.Options{}, theme, "", warning).Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	if v := m.View(); !strings.Contains(v, "using the dark theme") {
		t.Errorf("the console does not say its theme fell back:\n%s", v)
	}
}
