package testutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Proc is a running child process with its output captured: stdout line
// by line (Line waits for one), stderr, and both as they came (Log).
type Proc struct {
	cmd    *exec.Cmd
	lines  chan string
	stdout SyncBuffer
	stderr SyncBuffer
	log    SyncBuffer
	exited chan struct{} // closed once Wait has returned
	err    error         // Wait's result, valid once exited is closed
}

// ErrExited is what WaitReady returns (wrapped) when the process ends
// before it is ready: the caller may retry, with other ports say.
var ErrExited = errors.New("process exited")

// Start starts cmd with its output captured. The test's cleanup stops the
// process if it still runs then (Stop with a 10 s grace); a test that
// checks how it ends stops or signals it itself.
func Start(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{cmd: cmd, lines: make(chan string, 100), exited: make(chan struct{})}
	cmd.Stderr = io.MultiWriter(&p.stderr, &p.log)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.stdout.Write([]byte(line + "\n"))
			p.log.Write([]byte(line + "\n"))
			select {
			case p.lines <- line:
			default: // nobody waits for lines this far on
			}
		}
		io.Copy(io.Discard, out) // a line too long for the scanner
		close(p.lines)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	return p
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the process has ended.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// ExitCode is the process's exit code once it has ended, -1 before.
func (p *Proc) ExitCode() int {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Stdout, Stderr and Log are what the process wrote so far: on each
// stream, and on both in the order it arrived.
func (p *Proc) Stdout() string { return p.stdout.String() }
func (p *Proc) Stderr() string { return p.stderr.String() }
func (p *Proc) Log() string    { return p.log.String() }

// Tail is the last n lines of Log.
func (p *Proc) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(p.Log(), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// Line waits up to 10 s for the next stdout line matching re and returns
// its groups; lines before it are passed over.
func (p *Proc) Line(t testing.TB, re *regexp.Regexp) []string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("%s exited before printing %s; stderr:\n%s", p.name(), re, p.Stderr())
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("%s printed no line matching %s; stderr:\n%s", p.name(), re, p.Stderr())
		}
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Wait returns the exit code, failing the test if the process still runs
// after bound.
func (p *Proc) Wait(t testing.TB, bound time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(bound):
		t.Fatalf("%s still running after %s; stderr:\n%s", p.name(), bound, p.Stderr())
		return -1
	}
}

// Stop sends SIGTERM and, if the process has not ended within grace,
// SIGKILL (an error says so). It returns once the process is gone.
func (p *Proc) Stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return fmt.Errorf("%s (pid %d) ignored SIGTERM for %v and was killed", p.name(), p.Pid(), grace)
}

// WaitReady calls ready (each call bounded to a second) until it succeeds,
// the process ends (an error wrapping ErrExited) or timeout passes.
func (p *Proc) WaitReady(timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for pause := pollMin; ; pause = min(pause*2, 50*time.Millisecond) {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		last = ready(rctx)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s: %w (%v) before it was ready:\n%s", p.name(), ErrExited, p.err, p.Tail(30))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v: %v\n%s", p.name(), timeout, last, p.Tail(30))
		case <-time.After(pause):
		}
	}
}

func (p *Proc) name() string {
	name := p.cmd.Path
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// Terminate stops a process this test did not start itself (one running
// in a terminal, say) by its PID: SIGTERM, then SIGKILL if it has not ended
// within grace, which is an error. It returns once the process is gone.
func Terminate(pid int, grace time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM to pid %d: %w", pid, err)
	}
	if Poll(grace, func() bool { return !alive(pid) }) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	Poll(5*time.Second, func() bool { return !alive(pid) })
	return fmt.Errorf("pid %d ignored SIGTERM for %v and was killed", pid, grace)
}

// alive says whether pid is a process that has not ended (a zombie, ended
// but not yet reaped by its parent, counts as ended).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: the signal test is all there is
	}
	// The state follows the command name's closing parenthesis.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
