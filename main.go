// Command rpcdash is a local JSON-RPC router with request hedging and an
// operator console for blockchain RPC endpoints. `rpcdash help` lists its
// commands (the table below); each command lives in its own file
// (console.go, serve.go, sim.go, bench.go, drill.go, status.go) and takes
// the context run makes, which ends on SIGINT, SIGTERM or SIGHUP.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one command of the command line: usage is its synopsis and
// what it does, as `rpcdash help` prints it; its own --help prints its
// flags.
type command struct {
	name  string
	usage string
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are the command line's, in the order help lists them; the first
// runs when no command is named. (Set in init: their flag sets' usage reads
// the table.)
var commands []command

func init() {
	commands = []command{
		{"console", `rpcdash [console] [--config FILE] [--readonly] [--theme NAME|FILE] [--log-file PATH] [--log-level L]
      the engine and its console in one process
  rpcdash console --attach URL [--token T] [--readonly] [--theme NAME|FILE] [--config FILE]
      the console of a running rpcdash serve (its admin API)`, cmdConsole},
		{"serve", `rpcdash serve [--config FILE] [--log-level L]
      run the engine without the console`, cmdServe},
		{"sim", `rpcdash sim [--chain evm|solana] [--listen HOST] [--port N] [scenario flags] [PRESET|sim://URL ...]
      run simulated upstreams and print their URLs`, cmdSim},
		{"bench", `rpcdash bench [--mix M=W,…] [--rate R] [--duration D] [--policies …] [scenario flags]
              [--target URL [--admin URL]] [--format table|markdown|csv|json] [--out FILE]
      open-loop comparison of routing and hedging policies
      (scenario flags: --median --sigma --tail --tail-min --tail-max
      --endpoints --capacity --correlated --incident --seed)`, cmdBench},
		{"drill", `rpcdash drill [--admin URL --target URL | --breaker-failures N …] [--mode M]
              [--no-load] [--format text|json]
      the failover verification plan, automated: exit 1 naming the failed step
      (modes: ` + strings.Join(bench.DrillModes, ", ") + `)`, cmdDrill},
		{"status", `rpcdash status [--admin ADDR] [--token T] [--format table|csv|json] [--requests]
      print a running engine's status`, cmdStatus},
	}
}

// run runs the command line args and returns the exit code: 0 (help
// included, printed on stdout), 1 when the command fails, 2 for a command
// line that cannot run (an unknown command, a bad flag or argument).
func run(args []string, stdout, stderr io.Writer) int {
	// Signals are caught before anything listens, for every command: a
	// SIGTERM right after start must still shut down gracefully. SIGHUP
	// (the terminal closed, its tmux session killed) too: its default
	// killed the process outright, and a drill's fault stayed in force.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	name := commands[0].name
	if len(args) > 0 {
		switch a := args[0]; {
		case a == "help" && len(args) > 2:
			fmt.Fprintf(stderr, "rpcdash: help: unexpected argument %q\n\n", args[2])
			printUsage(stderr)
			return 2
		case a == "help" && len(args) > 1: // help CMD: CMD's flags
			name, args = args[1], []string{"--help"}
		case a == "help" || a == "-h" || a == "-help" || a == "--help":
			printUsage(stdout)
			return 0
		case !strings.HasPrefix(a, "-"):
			name, args = a, args[1:]
		}
	}
	i := commandIndex(name)
	if i < 0 {
		fmt.Fprintf(stderr, "rpcdash: unknown command %q\n\n", name)
		printUsage(stderr)
		return 2
	}
	errw := &cmdStderr{w: stderr}
	err := commands[i].run(ctx, args, stdout, errw)
	var usage cli.UsageError
	switch {
	case errors.Is(err, flag.ErrHelp): // --help asked for: the help is the output
		_, _ = errw.usage.WriteTo(stdout)
		return 0
	case err != nil && errw.usage.Len() > 0: // a bad flag: the flag package said which
		_, _ = errw.usage.WriteTo(stderr)
		return 2
	case errors.As(err, &usage): // a flag's bad value, a stray argument: the error, then the usage
		fmt.Fprintln(stderr, "rpcdash:", shownError(args, err))
		errw.printUsage(stderr)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "rpcdash:", shownError(args, err))
		return 1
	}
	return 0
}

// cmdStderr is the stderr a command runs with: what it writes goes
// through, but its flag set's output (help, or a bad flag and the usage)
// is held so that run can send help to stdout and errors to stderr. fs is
// the command's flag set (newFlags), whose usage follows a usage error.
type cmdStderr struct {
	w     io.Writer
	usage bytes.Buffer
	fs    *flag.FlagSet
}

func (c *cmdStderr) Write(p []byte) (int, error) { return c.w.Write(p) }

// printUsage writes the command's usage and flags to w, as a bad flag
// gets them from the flag package.
func (c *cmdStderr) printUsage(w io.Writer) {
	if c.fs == nil {
		return
	}
	c.fs.SetOutput(w)
	c.fs.Usage()
}

func commandIndex(name string) int {
	for i, c := range commands {
		if c.name == name {
			return i
		}
	}
	return -1
}

// printUsage prints the command list.
func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage:")
	for _, c := range commands {
		fmt.Fprintln(w, "  "+c.usage)
	}
	fmt.Fprintln(w, "\n`rpcdash COMMAND --help` (or `rpcdash help COMMAND`) lists a command's flags.")
}

// newFlags is a command's flag set: its --help prints the command's usage
// and flags, and its errors are returned (run prints them), not fatal.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("rpcdash "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if c, ok := stderr.(*cmdStderr); ok {
		fs.SetOutput(&c.usage)
		c.fs = fs
	}
	fs.Usage = func() {
		if i := commandIndex(name); i >= 0 {
			fmt.Fprintf(fs.Output(), "usage:\n  %s\n\nflags:\n", commands[i].usage)
		}
		fs.PrintDefaults()
	}
	return fs
}
