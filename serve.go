package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/probes"
	"github.com/rpcdash/rpcdash/sim"
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
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	sims, err := startSims(&cfg)
	if err != nil {
		return err
	}
	defer sim.CloseAll(sims)
	eng, prober, err := startEngine(cfg, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rpcdash: JSON-RPC on http://%s  admin on http://%s\n", eng.RPCAddr(), eng.AdminAddr())
	for _, s := range sims {
		fmt.Fprintf(stdout, "rpcdash: simulated upstream %s on %s\n", s.Name(), s.URL())
	}

	<-ctx.Done()
	log.Info("shutting down", "cause", context.Cause(ctx).Error(), "bound", cfg.Server.ShutdownTimeout)
	stopEngine(eng, prober, log)
	return nil
}

// startEngine starts an engine on cfg and, when cfg.Probes.Enabled, its
// probes (serve's and the console's; bench's engines are
// internal/benchengine's).
func startEngine(cfg engine.Config, log *slog.Logger) (*engine.Engine, *probes.Runner, error) {
	eng, err := engine.New(cfg, engine.Options{Logger: log})
	if err != nil {
		return nil, nil, err
	}
	if err := eng.Start(); err != nil {
		return nil, nil, err
	}
	if !cfg.Probes.Enabled {
		return eng, nil, nil
	}
	prober, err := probes.NewRunner(eng, eng.Config(), log)
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	prober.Start()
	return eng, prober, nil
}

// stopEngine stops the probes, then the engine: it stops taking requests
// and lets the ones in flight finish (server.shutdown_timeout bounds it).
func stopEngine(eng *engine.Engine, prober *probes.Runner, log *slog.Logger) {
	if prober != nil {
		prober.Close()
	}
	if err := eng.Close(); err != nil {
		log.Warn("shutdown", "err", err)
	}
}
