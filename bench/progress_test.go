package bench_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

func TestProgress_SaysTheRowAndTheTimeLeft(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// Row 2 of 4, 10 s a row, 5 s into it: 15 of 40 s done.
	got := bench.ProgressLine(4, 10*time.Second, 1, "off", t0, t0.Add(5*time.Second))
	if want := "[###########...................] row 2/4 off · 25s left"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

func TestProgress_OnlyOnATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if bench.IsTerminal(f) {
		t.Fatal("a file taken for a terminal")
	}
	// Main draws none when stderr is not a terminal: the run's duration is
	// said once, and nothing else goes to stderr.
	var out, errb bytes.Buffer
	args := []string{"--policies", "off", "--delays", "", "--quantiles", "", "--duration", "600ms", "--warmup", "0s", "--rate", "20", "--median", "1ms", "--tail", "0"}
	if err := bench.Main(context.Background(), args, bench.Stdio{Out: &out, Err: &errb}, startEngine); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(errb.String()), "\n"); len(lines) != 1 || strings.Contains(errb.String(), "\r") {
		t.Fatalf("stderr %q", errb.String())
	}
}
