package testutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestPoll_ReturnsAsSoonAsTheConditionHoldsAndFalseAtTheLimit(t *testing.T) {
	calls := 0
	if !Poll(time.Minute, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Fatalf("Poll gave up or asked %d times, want true after 3", calls)
	}
	start := time.Now()
	if Poll(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("Poll held a condition that never holds")
	}
	if took := time.Since(start); took < 30*time.Millisecond || took > 5*time.Second {
		t.Errorf("Poll gave up after %s, want just past 30ms", took)
	}
}

func TestSyncBuffer_TakesConcurrentWrites(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Fatalf("%d bytes, want 800", n)
	}
}

func TestFreeAddrs_AreDistinctLoopbackAddresses(t *testing.T) {
	addrs := FreeAddrs(t, 5)
	seen := map[string]bool{}
	for _, a := range addrs {
		if !strings.HasPrefix(a, "127.0.0.1:") || seen[a] {
			t.Fatalf("addresses %v: want 5 distinct 127.0.0.1 ones", addrs)
		}
		seen[a] = true
	}
}

// The trap is set before the lines the test waits for: set after them, a
// SIGTERM could come first and kill the shell (exit -1, seen once in CI).
func TestProc_CapturesLinesAndStopsGracefully(t *testing.T) {
	p := Start(t, exec.Command("sh", "-c", `trap 'echo bye; exit 3' TERM; echo ready 42; echo oops >&2; while :; do sleep 0.01; done`))
	if m := p.Line(t, regexp.MustCompile(`^ready (\d+)$`)); m[1] != "42" {
		t.Fatalf("line groups %q", m)
	}
	WaitUntil(t, 5*time.Second, "stderr", func() bool { return p.Stderr() == "oops\n" })
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if code := p.ExitCode(); code != 3 {
		t.Errorf("exit code %d, want the trap's 3", code)
	}
	if !strings.Contains(p.Log(), "oops") || !strings.Contains(p.Tail(1), "bye") {
		t.Errorf("log %q, tail %q", p.Log(), p.Tail(1))
	}
}

func TestProc_WaitReadySaysTheProcessExited(t *testing.T) {
	p := Start(t, exec.Command("sh", "-c", "echo starting; exit 1"))
	err := p.WaitReady(10*time.Second, func(context.Context) error { return errors.New("not yet") })
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "starting") {
		t.Fatalf("WaitReady = %v, want ErrExited with the log's tail", err)
	}
}

func TestTerminate_KillsWhatIgnoresSIGTERM(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap '' TERM; echo up; while :; do sleep 0.01; done`)
	p := Start(t, cmd)
	p.Line(t, regexp.MustCompile("^up$"))
	err := Terminate(p.Pid(), 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Terminate = %v, want an error saying it killed the process", err)
	}
	<-p.Exited()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("process ended with %v, want SIGKILL", cmd.ProcessState)
	}
}

func TestClock_MovesOnlyWhenAdvanced(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	if !c.Now().Equal(start) || c.Now().Location() != time.UTC {
		t.Fatalf("Now = %v, want %v", c.Now(), start)
	}
	c.Advance(1500 * time.Millisecond)
	if got := c.Now().Sub(start); got != 1500*time.Millisecond {
		t.Fatalf("advanced by %s, want 1.5s", got)
	}
}

// A run of ports for a child is free throughout and, on Linux, below the
// ephemeral range.
func TestFreePortRun_ConsecutiveFreeAndBelowTheEphemeralRange(t *testing.T) {
	first := FreePortRun(t, 3)
	low := ephemeralLow()
	if low > 10000 && (first < 10000 || first+3 > low) {
		t.Errorf("ports %d-%d: want them in [10000, %d), below the ephemeral range", first, first+2, low)
	}
	for p := first; p < first+3; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d of the run from %d not free: %v", p, first, err)
		}
		l.Close()
	}
}

// The addresses for a child process are distinct, free and, on Linux,
// outside the ephemeral range the kernel hands to port-0 listeners and
// outgoing connections, which could take one before the child binds it.
func TestFreeAddrs_DistinctFreeAndBelowTheEphemeralRange(t *testing.T) {
	addrs := FreeAddrs(t, 8)
	low := ephemeralLow()
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s given twice in %v", a, addrs)
		}
		seen[a] = true
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if low > 10000 && (port < 10000 || port >= low) {
			t.Errorf("%s: want a port in [10000, %d), below the ephemeral range", a, low)
		}
		l, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("%s not free: %v", a, err)
		}
		l.Close()
	}
}

// The whole process stopped (SIGSTOP) for 300 ms, as a loaded machine
// stops a test: the watch reports a stall at least that long.
func TestStallWatch_ReportsTheTimeTheProcessCouldNotRun(t *testing.T) {
	w := WatchStalls(t)
	time.Sleep(3 * stallTick)
	resume := exec.Command("sh", "-c", "sleep 0.3; kill -CONT "+strconv.Itoa(syscall.Getpid()))
	if err := resume.Start(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := resume.Wait(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * stallTick)
	if worst := w.Stop(); worst < 250*time.Millisecond {
		t.Errorf("stopped 300 ms, the watch saw a stall of %s", worst)
	}
	if again := w.Stop(); again < 250*time.Millisecond {
		t.Errorf("a second Stop gave %s", again)
	}
}
