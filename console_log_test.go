package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The console's log file is rotated at logMaxMB, logBackups old files
// kept: a session left running through a long incident appended to one
// file for ever (about 2 MB an hour in a soak).
func TestConsoleLog_RotatesAtItsSizeKeepingBackups(t *testing.T) {
	oldMax, oldBackups := logMaxMB, logBackups
	logMaxMB, logBackups = 1, 2
	t.Cleanup(func() { logMaxMB, logBackups = oldMax, oldBackups })

	dir := t.TempDir()
	path, w, err := openLogFile(filepath.Join(dir, "rpcdash.log"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 1023) + "\n"
	for range 4 * 1024 { // 4 MiB in 1 KiB lines
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, e := range entries {
		info, _ := e.Info()
		total += info.Size()
	}
	cur, err := os.Stat(path)
	if err != nil || cur.Size() > 1<<20 || len(entries) != 1+logBackups || total > int64(1+logBackups)<<20 {
		t.Fatalf("after 4 MiB: %d files, %d bytes in all, the current one %v (%v); want it at most 1 MiB beside %d backups", len(entries), total, cur, err, logBackups)
	}
}

// A log file that cannot be written is said at start, naming the flag.
func TestConsoleLog_AnUnwritablePathIsRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if os.Geteuid() == 0 {
		// root writes anywhere: a directory in place of the file instead.
		if err := os.Mkdir(filepath.Join(dir, "rpcdash.log"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := openLogFile(filepath.Join(dir, "rpcdash.log")); err == nil || !strings.HasPrefix(err.Error(), "--log-file: ") {
		t.Fatalf("err %v, want one naming --log-file", err)
	}
}
