package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	xterm "github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/cli"
	"github.com/rpcdash/rpcdash/themes"
	"github.com/rpcdash/rpcdash/ui"
)

// shippedConfig is config.toml as shipped: `rpcdash` with no ./config.toml
// and no --config runs it (three simulated endpoints and the demo load).
//
//go:embed config.toml
var shippedConfig []byte

// consoleFlags are the console's command line.
type consoleFlags struct {
	config, attach, token, theme, logFile, logLevel string
	configSet, readonly                             bool
	tokenFromEnv                                    bool // no --token: the environment's
	level                                           slog.Level
}

func parseConsoleFlags(args []string, stderr io.Writer) (consoleFlags, error) {
	var f consoleFlags
	fs := newFlags("console", stderr)
	fs.StringVar(&f.config, "config", "config.toml", "config file (TOML); without it and without ./config.toml, the shipped config")
	fs.StringVar(&f.attach, "attach", "", "admin `URL` (http://HOST:PORT or HOST:PORT) of a running rpcdash serve to attach to instead of starting an engine")
	cli.TokenFlag(fs, "token", "bearer token of the attached admin API (server.admin_token)")
	fs.StringVar(&f.theme, "theme", "", "theme: dark, light, contrast or a .toml file (default: ui.theme)")
	fs.BoolVar(&f.readonly, "readonly", false, "watch only: keys that would change the engine are off")
	fs.StringVar(&f.logFile, "log-file", "", "log file (default: rpcdash/rpcdash.log in the user cache directory)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, cli.Usagef("console: unexpected argument %q", fs.Arg(0))
	}
	given := cli.Given(fs)
	f.configSet = given["config"]
	if f.configSet && f.config == "" { // --config "$CONFIG", unset: "config : open : no such file"
		return f, cli.Usagef("--config: an empty path names no file")
	}
	// In process, RPCDASH_SERVER_ADMIN_TOKEN is server.admin_token, the
	// engine's: only a --token given is a mistake there.
	if given["token"] && f.attach == "" {
		return f, cli.Usagef("--token goes with --attach")
	}
	f.token = cli.TokenOf(fs, "token")
	f.tokenFromEnv = !given["token"] && f.token != ""
	if f.attach != "" {
		if _, err := engine.BaseURL("--attach", f.attach); err != nil {
			return f, cli.Usage(err)
		}
	}
	level, err := parseLogLevel(f.logLevel)
	if err != nil {
		return f, cli.Usage(err)
	}
	f.level = level
	return f, nil
}

// consoleConfigFile is the config file the console reads, and its name in
// messages: --config, else ./config.toml, else the shipped one (shipped).
func consoleConfigFile(f consoleFlags) (path string, data []byte, shipped bool, err error) {
	if _, statErr := os.Stat(f.config); f.configSet || statErr == nil {
		data, err := os.ReadFile(f.config)
		if err != nil {
			return f.config, nil, false, fmt.Errorf("config %s: %w", f.config, err)
		}
		return f.config, data, false, nil
	}
	return "config.toml (shipped, embedded)", shippedConfig, true, nil
}

// consoleConfig is the configuration the console runs (consoleConfigFile;
// note says when it is the shipped one).
func consoleConfig(f consoleFlags) (cfg engine.Config, note string, err error) {
	path, data, shipped, err := consoleConfigFile(f)
	if err != nil {
		return engine.Default(), "", err
	}
	if shipped {
		note = "no ./config.toml and no --config: running the shipped config (three simulated endpoints, demo load)"
	}
	cfg, err = loadConfigData(path, data)
	return cfg, note, err
}

// attachUIConfig is the [ui] an attached console runs with: of the file
// the console in process would read (consoleConfigFile), with
// RPCDASH_UI_* applied and checked over it, --config given or not.
func attachUIConfig(f consoleFlags) (engine.UIConfig, error) {
	path, data, _, err := consoleConfigFile(f)
	if err != nil {
		return engine.Default().UI, err
	}
	return loadUIConfigData(path, data)
}

// cmdConsole is `rpcdash` and `rpcdash console`: the engine and its console
// in one process, or (--attach) the console of another instance, until q,
// ctrl+c or ctx ends (SIGINT or SIGTERM).
func cmdConsole(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseConsoleFlags(args, stderr)
	if err != nil {
		return err
	}
	logPath, logFile, err := openLogFile(f.logFile)
	if err != nil {
		return err
	}
	defer func() {
		logFile.Close()
		fmt.Fprintln(stdout, "rpcdash: logs in", logPath)
	}()
	log := slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: f.level}))

	if os.Getenv("NO_COLOR") != "" {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
	if f.attach != "" {
		return attachConsole(ctx, f, log, stderr)
	}
	cfg, note, err := consoleConfig(f)
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintln(stderr, "rpcdash:", note)
		log.Info(note)
	}
	st, err := startStack(cfg, log)
	if err != nil {
		return err
	}
	eng := st.eng
	drills := newConsoleDrills()
	opts := ui.Options{Backend: ui.Local{Engine: eng}, Refresh: cfg.UI.Refresh, ReadOnly: f.readonly,
		Source: ui.Source{RPC: eng.RPCAddr(), Admin: eng.AdminAddr()},
		Drill:  drills.drill("http://"+eng.AdminAddr(), "http://"+eng.RPCAddr(), cfg.Server.AdminToken)}
	theme, warning := pickTheme(f.theme, cfg.UI.Theme, log, stderr)
	runErr := runConsole(ctx, opts, theme, note, warning)
	drills.stop() // a drill still running clears its fault before the engine goes

	// q, ctrl+c, SIGINT or SIGTERM: the engine stops taking requests and
	// lets the ones in flight finish (server.shutdown_timeout bounds it).
	log.Info("shutting down", "bound", cfg.Server.ShutdownTimeout)
	st.stop(log)
	return runErr
}

func attachConsole(ctx context.Context, f consoleFlags, log *slog.Logger, stderr io.Writer) error {
	uiCfg, err := attachUIConfig(f)
	if err != nil {
		return err
	}
	remote, err := attachRemote(f)
	if err != nil {
		return cli.Usage(err)
	}
	defer remote.Close()
	refresh, themeName := uiCfg.Refresh, uiCfg.Theme
	log.Info("attaching", "admin", remote.URL())
	drills := newConsoleDrills()
	defer drills.stop()
	opts := ui.Options{Backend: remote, Refresh: refresh, ReadOnly: f.readonly, Source: ui.Source{Attached: remote.URL()},
		Drill: drills.drill(remote.URL(), "", f.token)}
	theme, warning := pickTheme(f.theme, themeName, log, stderr)
	return runConsole(ctx, opts, theme, warning)
}

// attachRemote is the admin API of --attach, with the token of --token or
// the environment, named as given.
func attachRemote(f consoleFlags) (*ui.Remote, error) {
	remote, err := ui.NewRemote(f.attach, f.token)
	if err != nil {
		return nil, err
	}
	if f.tokenFromEnv {
		remote.SetTokenSource(cli.AdminTokenEnv)
	}
	return remote, nil
}

// pickTheme loads --theme, else ui.theme; an unusable theme falls back to
// the default with a warning, which it returns for the console to show:
// on stderr alone it is under the console's screen until it quits.
func pickTheme(flagTheme, cfgTheme string, log *slog.Logger, stderr io.Writer) (themes.Theme, string) {
	name := cfgTheme
	if flagTheme != "" {
		name = flagTheme
	}
	t, err := themes.LoadOrDefault(name)
	if err != nil {
		msg := err.Error()
		if strings.Contains(name, "://") || strings.Contains(name, "@") {
			// An endpoint URL given as a theme by mistake carries its key.
			msg = strings.ReplaceAll(msg, name, strings.Trim(engine.ShowConfigValue(name), `"`))
		}
		warning := fmt.Sprintf("%s; using the %s theme", msg, themes.DefaultName)
		fmt.Fprintln(stderr, "rpcdash:", warning)
		log.Warn("theme", "err", msg)
		return t, warning
	}
	return t, ""
}

// runConsole runs the Bubble Tea program until q, ctrl+c or ctx ends, and
// restores the terminal. Signals are main's (its context), not Bubble
// Tea's. A terminal that goes away (its input ends or fails: closed, its
// tmux session killed) ends it as ctx would: Bubble Tea only stopped
// reading keys at an EOF, and a console without its terminal ran on with
// its drill's fault in force.
func runConsole(ctx context.Context, opts ui.Options, theme themes.Theme, notes ...string) error {
	in, closeIn := consoleInput()
	defer closeIn()
	return runProgram(ctx, consoleModel(opts, theme, notes...), in, os.Stdout)
}

// consoleInput is the terminal the console reads its keys from, as Bubble
// Tea picks it: stdin when it is a terminal, else the process's terminal
// (/dev/tty); nil (Bubble Tea's own choice) when neither is one.
func consoleInput() (*os.File, func()) {
	if xterm.IsTerminal(os.Stdin.Fd()) {
		return os.Stdin, func() {}
	}
	f, err := os.Open("/dev/tty")
	if err != nil {
		return nil, func() {}
	}
	return f, func() { f.Close() }
}

// runProgram runs m on the terminal in (nil: Bubble Tea's default input)
// and out until it quits, ctx ends or in ends; the two last are a
// graceful exit, as q.
func runProgram(ctx context.Context, m tea.Model, in *os.File, out io.Writer) error {
	pctx, lost := context.WithCancel(ctx)
	defer lost()
	// 20 frames a second at most: the screen changes a few times a second
	// (ui.refresh), and the default 60 wakes an idle console for nothing.
	options := []tea.ProgramOption{tea.WithAltScreen(), tea.WithFPS(20), tea.WithContext(pctx), tea.WithoutSignalHandler(), tea.WithOutput(out)}
	if in != nil {
		options = append(options, tea.WithInput(&watchedInput{File: in, lost: lost}))
	}
	_, err := tea.NewProgram(m, options...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && pctx.Err() != nil {
		return nil // SIGINT, SIGTERM, SIGHUP or the terminal gone: a graceful exit like q
	}
	return err
}

// watchedInput is the console's terminal input: it reads as its file
// does (Bubble Tea still sees a terminal, to put in raw mode, and a file,
// whose reads it can cancel), and calls lost when a read ends in EOF or
// an error: the terminal is gone.
type watchedInput struct {
	*os.File
	lost func()
}

func (w *watchedInput) Read(p []byte) (int, error) {
	n, err := w.File.Read(p)
	if err != nil {
		w.lost()
	}
	return n, err
}

// consoleModel is the console's first model: its status line says the
// notes given (the shipped config, a theme that fell back), not empty.
func consoleModel(opts ui.Options, theme themes.Theme, notes ...string) ui.Model {
	opts.Theme = theme
	m := ui.New(opts)
	if note := strings.Join(slices.DeleteFunc(notes, func(n string) bool { return n == "" }), " · "); note != "" {
		m = m.WithStatus(note)
	}
	return m
}

// Console logs rotate: a session left running for days under a noisy
// incident (a soak wrote about 2 MB an hour) must not fill the disk. The
// file is rotated at logMaxMB, keeping logBackups old ones beside it.
var logMaxMB, logBackups = 20, 2

// openLogFile opens (appending) the console's log file, rotated:
// logs must never reach the screen while the console owns it.
func openLogFile(path string) (string, io.WriteCloser, error) {
	if path == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		path = filepath.Join(dir, "rpcdash", "rpcdash.log")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", nil, fmt.Errorf("--log-file: %v", err)
	}
	w, err := openRotatingLog(path, int64(logMaxMB)<<20, logBackups)
	if err != nil {
		return "", nil, fmt.Errorf("--log-file: %v", err)
	}
	return path, w, nil
}
