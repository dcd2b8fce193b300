package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Options are the engine's collaborators that are not configuration.
type Options struct {
	Logger *slog.Logger     // nil = discard
	Now    func() time.Time // nil = time.Now
}

// Engine is the router: endpoints, their state, the executor, the servers.
type Engine struct {
	cfg     Config
	now     func() time.Time
	log     *slog.Logger
	methods *MethodTable
	scrub   *secretScrubber
	client  *http.Client

	endpoints []*Endpoint
	byName    map[string]*Endpoint

	events  *eventLog
	acct    *accounts
	hedge   *hedger
	metrics *metrics
	filters *filterPins
	heads   headTracker
	// servedHead is the highest head returned to a client (monotonicHead).
	servedHead atomic.Int64

	rr       atomic.Uint64 // rotation among equally good endpoints
	inflight atomic.Int64  // client requests being served

	probeTrials atomic.Bool // active probes take the half-open trials

	lag       lagMonitor // rpcdash's own scheduling lag
	slow      slowdown   // the slowdown episode not charged to breakers
	openCap   openCap    // breaker.max_open_share
	panicked  panicState // router.panic_threshold
	stopWatch chan struct{}
	watchDone chan struct{}

	mu          sync.Mutex
	failoverLog map[string]failoverStat
	warnings    []string

	// base is the parent of read attempts' contexts, cancelled at shutdown:
	// the attempts a request leaves running (trials, tail samples) end then.
	base     context.Context
	stopBase context.CancelCauseFunc

	wg        sync.WaitGroup // attempt goroutines and their collectors
	rpcSrv    *http.Server
	adminSrv  *http.Server
	rpcLn     net.Listener
	adminLn   net.Listener
	serveErrs chan error
}

// New builds an engine from a validated configuration.
func New(cfg Config, opts Options) (*Engine, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:         cfg,
		now:         opts.Now,
		log:         opts.Logger,
		methods:     NewMethodTable(cfg.Chain.Kind, cfg.Methods),
		client:      newHTTPClient(),
		byName:      map[string]*Endpoint{},
		acct:        newAccounts(),
		filters:     newFilterPins(),
		failoverLog: map[string]failoverStat{},
	}
	if e.now == nil {
		e.now = time.Now
	}
	e.base, e.stopBase = context.WithCancelCause(context.Background())
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	urls := make([]string, 0, len(cfg.Endpoints))
	for _, c := range cfg.Endpoints {
		urls = append(urls, c.URL)
	}
	e.scrub = newSecretScrubber(urls)
	e.events = newEventLog(e.now, e.logEvent)
	e.hedge = newHedger(cfg.Hedge, cfg.Server.StatsWindow, e.now, e.events.add)
	for i, c := range cfg.Endpoints {
		ep := newEndpoint(i, c, e)
		ep.breaker.SetOpenGate(func(hard bool, why string) bool { return e.allowOpen(ep, hard, why) })
		e.endpoints = append(e.endpoints, ep)
		e.byName[ep.Name] = ep
	}
	e.metrics = newMetrics(e)
	return e, nil
}

func (e *Engine) logEvent(ev Event) {
	e.log.Info("event", "type", string(ev.Type), "endpoint", ev.Endpoint, "from", ev.From, "to", ev.To, "message", ev.Message)
}

// Config returns the configuration the engine runs with (defaults filled).
func (e *Engine) Config() Config { return e.cfg }

// Start binds the RPC and admin listeners and serves them in the background.
func (e *Engine) Start() error {
	var err error
	if e.rpcLn, err = net.Listen("tcp", e.cfg.Server.Listen); err != nil {
		return fmt.Errorf("server.listen %s: %w", e.cfg.Server.Listen, err)
	}
	if e.adminLn, err = net.Listen("tcp", e.cfg.Server.Admin); err != nil {
		e.rpcLn.Close()
		return fmt.Errorf("server.admin %s: %w", e.cfg.Server.Admin, err)
	}
	e.rpcSrv = &http.Server{Handler: e.RPCHandler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	e.adminSrv = &http.Server{Handler: e.AdminHandler(), ReadHeaderTimeout: 10 * time.Second}
	e.serveErrs = make(chan error, 2)
	e.stopWatch, e.watchDone = make(chan struct{}), make(chan struct{})
	go e.watch(e.stopWatch, e.watchDone)
	go func() { e.serveErrs <- e.rpcSrv.Serve(e.rpcLn) }()
	go func() { e.serveErrs <- e.adminSrv.Serve(e.adminLn) }()
	e.log.Info("listening", "rpc", e.rpcLn.Addr().String(), "admin", e.adminLn.Addr().String())
	return nil
}

// RPCAddr and AdminAddr are the bound addresses (after Start).
func (e *Engine) RPCAddr() string   { return e.rpcLn.Addr().String() }
func (e *Engine) AdminAddr() string { return e.adminLn.Addr().String() }

// Shutdown stops taking requests, lets in-flight ones finish within ctx, then
// waits for every attempt goroutine.
func (e *Engine) Shutdown(ctx context.Context) error {
	var errs []error
	if e.rpcSrv != nil {
		if err := e.rpcSrv.Shutdown(ctx); err != nil {
			// In-flight requests overran the bound: cut their connections,
			// which cancels their attempts.
			errs = append(errs, err, e.rpcSrv.Close())
		}
		if err := e.adminSrv.Shutdown(ctx); err != nil {
			errs = append(errs, e.adminSrv.Close())
		}
		for range 2 {
			if err := <-e.serveErrs; err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs = append(errs, err)
			}
		}
		e.rpcSrv = nil
		close(e.stopWatch)
		<-e.watchDone
	}
	// Requests are over: what they left running (trials, tail samples)
	// ends now.
	e.stopBase(errShutdown)
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("attempts still running at shutdown deadline"))
		<-done // attempts end when their contexts do; the servers' are gone
	}
	e.client.CloseIdleConnections()
	return errors.Join(errs...)
}

// Close is Shutdown bounded by server.shutdown_timeout.
func (e *Engine) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.Server.ShutdownTimeout)
	defer cancel()
	return e.Shutdown(ctx)
}

// ErrNoEndpoint: the control API or a probe named an endpoint the pool does
// not have.
var ErrNoEndpoint = errors.New("no endpoint named")

func (e *Engine) endpoint(name string) (*Endpoint, error) {
	ep, ok := e.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrNoEndpoint, name)
	}
	return ep, nil
}
