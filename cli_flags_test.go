package main

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/cli"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// runBounded is run with a bound: a command line that should have been
// refused but runs (a sim serving until SIGINT) fails the test instead of
// hanging it.
func runBounded(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, &out, &errb) }()
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%v ran instead of being refused", args)
	}
	return code, out.String(), errb.String()
}

// A flag's bad value, whichever the command, is a usage error: exit 2,
// nothing on stdout, and on stderr the error naming the flag, then the
// command's usage. A value given is never replaced by a default (drill
// --breaker-failures 0 ran with 3, bench --timeout 0s with 10s, bench
// --batch 0 without batches), a bare host is not a HOST:PORT (it was
// taken for port 80), and a flag that goes with another is refused
// without it, naming that one (drill and bench --admin-token without
// --admin, drill --rate with --no-load, were ignored).
func TestRun_BadFlagValuesAreUsageErrorsNamingTheFlag(t *testing.T) {
	// Before the value under test, so that it wins: a run that is not
	// refused is short.
	short := []string{"--duration", "200ms", "--warmup", "0s", "--policies", "off", "--delays", "", "--quantiles", ""}
	bench := func(args ...string) []string { return append(append([]string{"bench"}, short...), args...) }
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{bench("--rate", "-5"), "--rate"},
		{bench("--rate", "0"), "--rate"},
		{bench("--duration", "0s"), "--duration"},
		{bench("--mix", "eth_call=abc"), "--mix"},
		{bench("--policies", "bogus"), "--policies"},
		{bench("--quantiles", "1.5"), "--quantiles"},
		{bench("--endpoints", "0"), "--endpoints"},
		{bench("--tail", "2"), "--tail"},
		{bench("--tail", "NaN"), "--tail"},
		{bench("--sigma", "-1"), "--sigma"},
		{bench("--incident", "0s", "--correlated", "0.5"), "--incident"},
		{bench("--fanout", "0"), "--fanout"},
		{bench("--batch", "0"), "--batch"},
		{bench("--count", "-1"), "--count"},
		{bench("--count", "0"), "--count"},
		{bench("--params", "notjson"), "--params"},
		{bench("--delays", "-5ms"), "--delays"},
		{bench("--arrivals", "burst"), "--arrivals"},
		{bench("--control-share", "2"), "--control-share"},
		{bench("--control-share", "NaN"), "--control-share"},
		{bench("--timeout", "-1s"), "--timeout"},
		{bench("--timeout", "0s"), "--timeout"},
		{bench("--warmup", "-1s"), "--warmup"},
		{bench("--deadline", "-1s"), "--deadline"},
		{bench("--max-extra", "0"), "--max-extra"},
		{bench("--format", "yaml"), "--format"},
		{bench("--json", "--format", "csv"), "--format"},
		{[]string{"bench", "--target", "127.0.0.1", "--duration", "200ms", "--warmup", "0s"}, "--target"},
		{[]string{"bench", "--target", "127.0.0.1:1", "--admin", "localhost", "--duration", "200ms", "--warmup", "0s"}, "--admin"},
		{[]string{"sim", "--endpoints", "0"}, "--endpoints"},
		{[]string{"sim", "--tail", "1.5"}, "--tail"},
		{[]string{"sim", "--tail", "1.5", "steady"}, "--tail"},
		{[]string{"sim", "--sigma", "-1"}, "--sigma"},
		{[]string{"sim", "--chain", "btc"}, "--chain"},
		{[]string{"sim", "--capacity", "-1"}, "--capacity"},
		{[]string{"sim", "steady", "--endpoints", "2"}, "--endpoints"},
		{[]string{"sim", "nope"}, `"nope"`},
		{[]string{"sim", "--listen", "0.0.0.0"}, "--listen"},
		{[]string{"sim", "--listen", ""}, "--listen"},
		{[]string{"sim", "--listen", "192.0.2.1", "steady"}, "--listen"},
		{[]string{"serve", "--log-level", "bogus"}, "--log-level"},
		{[]string{"console", "--log-level", "bogus"}, "--log-level"},
		{[]string{"serve", "--log-level", "error+100"}, "--log-level"},
		{[]string{"console", "--log-level", "INFO-2"}, "--log-level"},
		{[]string{"console", "--attach", "127.0.0.1"}, "--attach"},
		{[]string{"status", "--admin", "127.0.0.1"}, "--admin"},
		{[]string{"status", "--admin", "127.0.0.1:0"}, "--admin"},
		{[]string{"status", "--json", "--format", "table"}, "--format"},
		{[]string{"drill", "--breaker-failures", "0"}, "--breaker-failures"},
		{[]string{"drill", "--breaker-successes", "-2"}, "--breaker-successes"},
		{[]string{"drill", "--breaker-cooldown", "-1s"}, "--breaker-cooldown"},
		{[]string{"drill", "--probe-interval", "0s"}, "--probe-interval"},
		{[]string{"drill", "--step-timeout", "0s"}, "--step-timeout"},
		{[]string{"drill", "--mode", "latency", "--latency", "0s"}, "--latency"},
		{[]string{"drill", "--mode", "error", "--latency", "1s"}, "--latency"},
		{[]string{"drill", "--admin", "127.0.0.1", "--no-load"}, "--admin"},
		{[]string{"drill", "--admin", "127.0.0.1:1", "--target", "127.0.0.1"}, "--target"},
		{[]string{"drill", "--admin-token", "x"}, "--admin-token goes with --admin"},
		{[]string{"drill", "--allow-remote"}, "--allow-remote goes with --admin"},
		{[]string{"drill", "--no-load", "--rate", "5"}, "--rate"},
		{[]string{"drill", "--admin", "127.0.0.1:1", "--no-load", "--seed", "3"}, "--seed"},
		{bench("--admin-token", "x"), "--admin-token goes with --admin"},
	} {
		name := strings.Replace(strings.Join(tc.args, " "), strings.Join(short, " ")+" ", "", 1)
		t.Run(name, func(t *testing.T) {
			code, out, errb := runBounded(t, tc.args...)
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing on stdout; stderr:\n%s", code, out, errb)
			}
			first, rest, _ := strings.Cut(errb, "\n")
			if !strings.HasPrefix(first, "rpcdash: ") || !strings.Contains(first, tc.flag) {
				t.Errorf("the error %q does not name %s", first, tc.flag)
			}
			if !strings.HasPrefix(rest, "usage:\n  rpcdash") || !strings.Contains(rest, "flags:") {
				t.Errorf("no usage after the error:\n%s", errb)
			}
		})
	}
}

// A flag that a combination would leave unread is refused: exit 2,
// nothing on stdout, the error naming it and the flag it goes with (or
// against), then the usage. Each was accepted and silently ignored: the
// command ran (against SIM, a simulated upstream, and ADMIN, a running
// rpcdash's admin API) as if it had not been given.
func TestRun_FlagsTheCombinationWouldIgnoreAreUsageErrors(t *testing.T) {
	up := sim.New(sim.Config{Name: "fast"})
	if err := up.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	_, admin := statusServe(t, "")
	at := strings.NewReplacer("SIM", up.URL(), "ADMIN", admin)
	// A bench not refused is short.
	bench := func(args ...string) []string {
		return append([]string{"bench", "--warmup", "0s", "--policies", "off", "--delays", "", "--quantiles", "", "--rate", "20", "--median", "1ms"}, args...)
	}
	for _, tc := range []struct {
		args  []string
		flags []string // named on the error's line
	}{
		// --no-load sends no reads, and --target is only where they go.
		{[]string{"drill", "--admin", "127.0.0.1:1", "--no-load", "--target", "127.0.0.1:2"}, []string{"--target", "--no-load"}},
		// A row measures --count operations or for --duration: the count
		// won and the duration was dropped.
		{bench("--count", "5", "--duration", "1h"), []string{"--count", "--duration"}},
		// --yes confirms what --allow-remote lets through, and
		// --allow-remote lets a --target through: on the built-in sims
		// they ran unread.
		{bench("--duration", "200ms", "--yes"), []string{"--yes", "--allow-remote"}},
		{bench("--duration", "200ms", "--allow-remote"), []string{"--allow-remote", "--target"}},
		{bench("--duration", "200ms", "--allow-remote", "--yes"), []string{"--allow-remote", "--target"}},
		// A batch is one request of K calls, a fan-out K requests: --fanout
		// 1 (an operation of one call) was let through and unread.
		{bench("--duration", "200ms", "--batch", "3", "--fanout", "1"), []string{"--batch", "--fanout"}},
		// The control tenant goes to --control-target only with --target
		// (on the built-in sims, to the sims), and only with a share: it
		// was dialled, named in the report's target line, and sent nothing.
		{bench("--duration", "200ms", "--control-share", "0.2", "--control-target", "SIM"), []string{"--control-target", "--target"}},
		{[]string{"bench", "--target", "SIM", "--control-target", "SIM", "--duration", "200ms", "--warmup", "0s", "--rate", "20"}, []string{"--control-target", "--control-share"}},
		// --requests adds to the table; the JSON is the raw status, and
		// the slowest requests were left out of it without a word.
		{[]string{"status", "--admin", "ADMIN", "--format", "json", "--requests"}, []string{"--requests", "--format json"}},
		{[]string{"status", "--admin", "ADMIN", "--json", "--requests"}, []string{"--requests", "--json"}},
		// A scenario flag that changes no sim: tail bounds without a tail,
		// an incident length without shared tails (TestSim_AScenarioFlagThatChangesOnePresetIsTaken).
		{bench("--duration", "200ms", "--incident", "1s"), []string{"--incident", "--correlated"}},
		{bench("--duration", "200ms", "--tail", "0", "--tail-min", "100ms"), []string{"--tail-min", "--tail"}},
		{[]string{"sim", "--incident", "1s"}, []string{"--incident", "--correlated"}},
		{[]string{"sim", "steady", "fast", "--tail-max", "2s"}, []string{"--tail-max", "--tail"}},
		// --max-extra is the hedges per request: rows that send none
		// (here only off) ran with it unread.
		{bench("--duration", "200ms", "--max-extra", "2"), []string{"--max-extra", "--policies"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = at.Replace(a)
			}
			code, out, errb := runBounded(t, args...)
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing on stdout; stderr:\n%s", code, out, errb)
			}
			first, rest, _ := strings.Cut(errb, "\n")
			for _, f := range tc.flags {
				if !strings.HasPrefix(first, "rpcdash: ") || !strings.Contains(first, f) {
					t.Errorf("the error %q does not name %s", first, f)
				}
			}
			if !strings.HasPrefix(rest, "usage:\n  rpcdash") || !strings.Contains(rest, "flags:") {
				t.Errorf("no usage after the error:\n%s", errb)
			}
		})
	}
}

// bench --help is headed like every other command's, not by the flag
// package's "Usage of rpcdash bench:".
func TestRun_BenchHelpIsHeadedLikeTheOthers(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "usage:\n  rpcdash bench [--mix") || strings.Contains(out.String(), "Usage of") {
		t.Errorf("bench --help:\n%s", out.String())
	}
}

// bench against a port nothing listens on fails (exit 1) before the run,
// saying so, instead of reporting connection failures as 1 ms latencies
// and exiting 0.
func TestBench_UnreachableTargetFails(t *testing.T) {
	refused := testutil.FreeAddrs(t, 1)[0] // closed again: nothing listens there
	code, out, errb := runBounded(t, "bench", "--target", refused, "--duration", "1s", "--warmup", "1s", "--rate", "20")
	if code != 1 || out != "" || !strings.Contains(errb, "--target http://"+refused+": nothing answers there") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, no report and the error naming the target", code, out, errb)
	}
	if strings.Contains(errb, "row(s)") {
		t.Errorf("announced a run it could not make: %s", errb)
	}
}

// Flags may follow the presets: `rpcdash sim steady --median 1ms` said
// unknown preset "--median".
func TestSim_FlagsAfterPresets(t *testing.T) {
	p := startProc(t, "sim", "steady", "--median", "1ms", "fast")
	for _, name := range []string{"steady", "fast"} {
		p.Line(t, regexp.MustCompile(`^`+name+`\thttp://127\.0\.0\.1:\d+\t`))
	}
	p.Signal(t, syscall.SIGINT)
	if code := p.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, p.Stderr())
	}
}

// A scenario flag given with presets is taken when it changes any of them:
// --tail-min shapes heavy-tail's tail, though steady has none.
func TestSim_AScenarioFlagThatChangesOnePresetIsTaken(t *testing.T) {
	p := startProc(t, "sim", "steady", "heavy-tail", "--tail-min", "300ms")
	for _, name := range []string{"steady", "heavy-tail"} {
		p.Line(t, regexp.MustCompile(`^`+name+`\thttp://127\.0\.0\.1:\d+\t`))
	}
	p.Signal(t, syscall.SIGINT)
	if code := p.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, p.Stderr())
	}
}

// sim --chain given overrides a URL's chain=, as the scenario flags
// override its other values: the URL's won, the flag unread.
func TestSim_ChainFlagOverridesTheURLs(t *testing.T) {
	p := startProc(t, "sim", "--chain", "solana", "sim://fast?chain=evm")
	m := p.Line(t, regexp.MustCompile(`^fast\thttp://(127\.0\.0\.1:\d+)\t`))
	if a := call(t, m[1], "getSlot"); a.Error != nil {
		t.Errorf("getSlot: %+v; want the sim on solana", *a.Error)
	}
	p.Signal(t, syscall.SIGINT)
	if code := p.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, p.Stderr())
	}
}

// The admin token of the environment is never printed: it was the token
// flags' default, which the flag package shows in help and after a usage
// error. Help names the variable instead.
func TestRun_EnvironmentAdminTokenIsNeverPrinted(t *testing.T) {
	const secret = "SECRETTOK-5e0d"
	t.Setenv(cli.AdminTokenEnv, secret)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"status", "--help"}, 0},
		{[]string{"help", "status"}, 0},
		{[]string{"console", "--help"}, 0},
		{[]string{"drill", "--help"}, 0},
		{[]string{"bench", "--help"}, 0},
		{[]string{"status", "--format", "xml"}, 2},
		{[]string{"status", "--bogus"}, 2},
		{[]string{"console", "--bogus"}, 2},
		{[]string{"drill", "--mode", "nope"}, 2},
		{[]string{"bench", "--format", "xml"}, 2},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errb := runBounded(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errb)
			}
			if strings.Contains(out+errb, secret) {
				t.Errorf("the token is printed:\n%s%s", out, errb)
			}
			if !strings.Contains(out+errb, "(default: $"+cli.AdminTokenEnv+")") {
				t.Errorf("the token flag's help does not name %s:\n%s%s", cli.AdminTokenEnv, out, errb)
			}
		})
	}
}

// The environment's token is still sent when the flag is not given, and a
// token given beats it. (serve takes the same variable as server.admin_token.)
func TestStatus_TokenFromTheEnvironmentUnlessGiven(t *testing.T) {
	t.Setenv(cli.AdminTokenEnv, "tok-7a1b")
	_, admin := statusServe(t, "")
	if out, errb, code := runStatus(t, "--admin", admin, "--json"); code != 0 || !strings.Contains(out, `"endpoints"`) {
		t.Errorf("with the environment's token: exit %d, stderr %s", code, errb)
	}
	if _, errb, code := runStatus(t, "--admin", admin, "--token", "wrong"); code != 1 || !strings.Contains(errb, "401") {
		t.Errorf("--token wrong: exit %d, stderr %s; want 1 and HTTP 401", code, errb)
	}
}

// The environment's token is not an --admin-token given: bench without
// --admin runs under it.
func TestRun_EnvironmentTokenWithoutAdminRuns(t *testing.T) {
	t.Setenv(cli.AdminTokenEnv, "tok-c41d")
	code, out, errb := runBounded(t, "bench", "--duration", "200ms", "--warmup", "0s", "--policies", "off", "--delays", "", "--quantiles", "",
		"--rate", "20", "--median", "1ms")
	if code != 0 || !strings.Contains(out, "off") {
		t.Errorf("exit %d, stdout %q, stderr %q; want a report", code, out, errb)
	}
}

// --log-level takes the four levels its usage names, in any case, and
// nothing else: slog's offsets ("error+100") were let through.
func TestParseLogLevel_TheFourLevelsOnly(t *testing.T) {
	for s, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "Warn": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := parseLogLevel(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"error+100", "INFO-2", "warning", "", "0"} {
		if got, err := parseLogLevel(s); err == nil {
			t.Errorf("%q read as %v", s, got)
		}
	}
}

// sim --listen takes a loopback host other than the default; any other
// host is refused (TestRun_BadFlagValuesAreUsageErrorsNamingTheFlag).
func TestSim_ListenOnAnotherLoopbackHost(t *testing.T) {
	p := startProc(t, "sim", "--listen", "localhost", "fast")
	p.Line(t, regexp.MustCompile(`^fast\thttp://(127\.0\.0\.1|\[::1\]):\d+\t`))
	p.Signal(t, syscall.SIGINT)
	if code := p.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, p.Stderr())
	}
}

// A malformed URL flag and a flag missing beside it are both said, each a
// usage error (README): `drill --admin 127.0.0.1` said only that --target
// was missing, `bench --admin 127.0.0.1` only that the URL was malformed.
func TestRun_AMalformedURLAndAMissingTargetAreBothSaid(t *testing.T) {
	for _, args := range [][]string{{"drill", "--admin", "127.0.0.1"}, {"bench", "--admin", "127.0.0.1"}} {
		code, out, errb := runBounded(t, args...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2 and nothing", args, code, out)
		}
		for _, want := range []string{args[0] + `: --admin: "127.0.0.1" is not a URL`, args[0] + ": --admin needs --target"} {
			if !strings.Contains(errb, want) {
				t.Errorf("%v: stderr does not say %q:\n%s", args, want, errb)
			}
		}
	}
}
