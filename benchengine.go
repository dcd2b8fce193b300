package main

import (
	"os"

	"github.com/rpcdash/rpcdash/bench"
)

// stdio is the process's standard streams as bench and the drill take
// them: a progress bar only when stderr is a terminal.
func stdio(stdout, stderr interface{ Write([]byte) (int, error) }) bench.Stdio {
	f, ok := stderr.(*os.File)
	return bench.Stdio{In: os.Stdin, Out: stdout, Err: stderr, Terminal: ok && bench.IsTerminal(f)}
}
