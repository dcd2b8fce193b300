package main

import (
	"context"
	"flag"
	"io"
	"os"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/internal/benchengine"
)

// cmdBench is `rpcdash bench` (bench.Main), on engines internal/benchengine
// starts.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return bench.Main(ctx, args, stdio(stdout, stderr), benchengine.Start)
}

// stdio is the process's standard streams as bench and the drill take
// them: a progress bar only when stderr is a terminal.
func stdio(stdout, stderr io.Writer) bench.Stdio {
	s := bench.Stdio{In: os.Stdin, Out: stdout, Err: stderr, Flags: func() *flag.FlagSet { return newFlags("bench", stderr) }}
	if c, ok := stderr.(*cmdStderr); ok {
		s.Err = c.w
	}
	f, ok := s.Err.(*os.File)
	s.Terminal = ok && bench.IsTerminal(f)
	return s
}
