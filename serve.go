package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/rpcdash/rpcdash/internal/cli"
)

// cmdServe is `rpcdash serve`: the engine without the console, logging to
// stderr, until ctx ends (SIGINT or SIGTERM); then it stops taking requests
// and lets those in flight finish within server.shutdown_timeout.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	cfgPath := fs.String("config", "config.toml", "config file (TOML)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	if *cfgPath == "" {
		return cli.Usagef("serve: --config: an empty path names no file")
	}
	level, err := parseLogLevel(*logLevel)
	if err != nil {
		return cli.Usage(fmt.Errorf("serve: %w", err))
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	cfg, err := loadConfig(*cfgPath)
	if errors.Is(err, os.ErrNotExist) && !cli.Given(fs)["config"] {
		// The console runs the shipped config without one; serve, headless,
		// does not guess which upstreams to serve.
		return fmt.Errorf("%w: serve reads ./config.toml unless --config names a file (the console runs the shipped config, with simulated endpoints, without one)", err)
	}
	if err != nil {
		return err
	}
	st, err := startStack(cfg, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rpcdash: JSON-RPC on http://%s  admin on http://%s\n", st.eng.RPCAddr(), st.eng.AdminAddr())
	for _, s := range st.sims {
		fmt.Fprintf(stdout, "rpcdash: simulated upstream %s on %s\n", s.Name(), s.URL())
	}

	<-ctx.Done()
	log.Info("shutting down", "cause", context.Cause(ctx).Error(), "bound", cfg.Server.ShutdownTimeout)
	st.stop(log)
	return nil
}

// parseLogLevel reads --log-level: debug, info, warn or error, in any case;
// not slog's offsets ("error+100", "INFO-2"), which its usage does not offer.
func parseLogLevel(s string) (slog.Level, error) {
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		if strings.EqualFold(s, l.String()) {
			return l, nil
		}
	}
	return 0, fmt.Errorf("--log-level: %q is not debug, info, warn or error", s)
}
