package main

import (
	"strings"
	"testing"
)

// An empty --config (a script's --config "$CONFIG" with the variable
// unset) is a flag's bad value: exit 2 naming the flag, then the usage. It
// was exit 1 with "rpcdash: config : open : no such file or directory".
func TestRun_AnEmptyConfigPathIsAUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--config", ""},
		{"console", "--config", ""},
		{"--config="},
		{"console", "--attach", "127.0.0.1:1", "--config", ""},
	} {
		code, out, errOut := runBounded(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "--config: an empty path names no file") || !strings.Contains(errOut, "usage:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 naming --config, then the usage", args, code, out, errOut)
		}
	}
}
