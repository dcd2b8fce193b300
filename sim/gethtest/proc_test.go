package gethtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is a child process whose output goes to a log file.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{} // closed once Wait has returned
	err    error         // Wait's result, valid after exited is closed
}

func startProc(name, logPath, bin string, args ...string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child holds its own copy of the descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM and, if the process has not exited within grace,
// SIGKILL. It returns once the process is gone.
func (p *proc) stop(grace time.Duration) error {
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
	return fmt.Errorf("%s (pid %d) ignored SIGTERM for %v and was killed", p.name, p.cmd.Process.Pid, grace)
}

// logTail returns the last n lines of the process log.
func (p *proc) logTail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var errExited = errors.New("process exited")

// waitReady polls ready until it succeeds, the process exits, or the
// deadline passes.
func (p *proc) waitReady(timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		last = ready(rctx)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s: %w (%v) before it was ready:\n%s", p.name, errExited, p.err, p.logTail(30))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v: %v\n%s", p.name, timeout, last, p.logTail(30))
		case <-tick.C:
		}
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// A process that then loses the race for one fails to start, and callers
// retry with new ports.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
