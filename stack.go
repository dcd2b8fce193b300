package main

import (
	stdlog "log"
	"log/slog"
	"os"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/probes"
	"github.com/rpcdash/rpcdash/sim"
)

// stack is what serve and the console run on a config: its sim://
// upstreams, the engine in front of them and, when cfg.Probes.Enabled, the
// engine's probes. (bench's engines are internal/benchengine's.)
type stack struct {
	sims   []*sim.Upstream
	eng    *engine.Engine
	prober *probes.Runner
}

func startStack(cfg engine.Config, log *slog.Logger) (*stack, error) {
	sims, err := startSims(&cfg)
	if err != nil {
		return nil, err
	}
	st := &stack{sims: sims}
	if st.eng, err = engine.New(cfg, engine.Options{Logger: log}); err == nil {
		err = st.eng.Start()
	}
	if err == nil && cfg.Probes.Enabled {
		if st.prober, err = probes.NewRunner(st.eng, st.eng.Config(), log); err == nil {
			st.prober.Start()
		} else {
			st.eng.Close()
		}
	}
	if err != nil {
		sim.CloseAll(sims)
		return nil, err
	}
	// The standard library's own log lines (net/http's among them, which can
	// quote an upstream's bytes) go to the engine's log, not to stderr.
	stdlog.SetFlags(0)
	stdlog.SetOutput(st.eng.StdLogWriter())
	return st, nil
}

// stop stops the probes, then the engine: it stops taking requests and
// lets the ones in flight finish (server.shutdown_timeout bounds it); the
// sims go last, once nothing is waiting on them.
func (st *stack) stop(log *slog.Logger) {
	if st.prober != nil {
		st.prober.Close()
	}
	if err := st.eng.Close(); err != nil {
		log.Warn("shutdown", "err", err)
	}
	sim.CloseAll(st.sims)
	stdlog.SetOutput(os.Stderr)
	stdlog.SetFlags(stdlog.LstdFlags)
}
