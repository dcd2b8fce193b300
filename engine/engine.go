package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// Options are the engine's collaborators that are not configuration.
type Options struct {
	Logger *slog.Logger     // nil = discard
	Now    func() time.Time // nil = time.Now
	// Rand returns a number in [0, 1) for the canary's and the shadows'
	// shares; nil = math/rand/v2. Tests make the draws deterministic.
	Rand func() float64
}

// Engine is the router: endpoints, their state, the executor, the servers.
type Engine struct {
	cfg Config
	// identity: who judges the chain clients' identity answers reveal
	// (WatchIdentity).
	identity atomic.Pointer[identityWatch]
	drills   drillLeases // one drill at a time (drill_lease.go)
	now      func() time.Time
	log      *slog.Logger
	methods  *jsonrpc.MethodTable
	names    *methodNames // the name each client method is counted under
	scrub    *redact.Scrubber
	client   *http.Client

	endpoints []*endpoint
	byName    map[string]*endpoint

	events  *eventLog
	acct    *accounts
	recent  *recentTraffic // the console's last minute of client traffic
	trace   *traceRing     // the last server.trace_requests requests; nil when off
	started time.Time
	hedge   *hedger
	trials  hedgeTrials // since each method's last hedging change (the tuning view)
	metrics *metrics
	filters *filterTable
	// affinity sends writes, and the reads that must see them, to the
	// endpoint that took the latest write (router.write_affinity).
	affinity *writeAffinity
	heads    headTracker
	// servedHead is the highest head returned to a client (monotonicHead).
	servedHead atomic.Int64
	// servedHeadAbove is since when servedHead has stood above the pool
	// head (unix ns; 0: it does not), see monotonicHead.
	servedHeadAbove atomic.Int64
	// solanaFloors are the highest Solana slots and block heights returned
	// at each commitment that are no head (solana_floors.go).
	solanaFloors solanaFloors
	// finality is the highest finalized and safe block numbers returned
	// (finality.go).
	finality finalityFloors
	// contextFloors are the highest Solana context.slot returned at each
	// commitment (solana_context.go).
	contextFloors contextFloors
	// latestFloor is the highest EVM latest block returned (latestblock.go).
	latestFloor readFloor

	rr       atomic.Uint64 // rotation among equally good endpoints
	inflight atomic.Int64  // client requests being served
	admitted atomic.Int64  // client requests being read or served (server.max_inflight)
	bodies   atomic.Int64  // bytes of request bodies held, as read or decoded (server.max_held_body_bytes)
	answers  *heldAnswers  // large answers being handed to clients (server.max_held_answer_bytes)

	// stopping ends when Shutdown starts (request bodies still being read
	// are cut); hardStop when its deadline passes (requests still being
	// served are cut, and answered so).
	stopping, hardStop context.Context
	stop, stopHard     context.CancelFunc

	probeTrials atomic.Bool // active probes take the half-open trials
	// ranked, set by tests only, runs between a request's ranking and its
	// first attempt: where another request may change a breaker.
	ranked atomic.Pointer[func()]

	lag      lagMonitor // rpcdash's own scheduling lag
	pacesAt  time.Time  // when notePaces last took the endpoints' paces (the watch loop's)
	slow     slowdown   // the slowdown episode not charged to breakers
	after    slowAftermath
	queue    queueGuard // hedging's queue guard (queueing.go)
	openCap  openCap    // breaker.max_open_share
	panicked panicState // router.panic_threshold
	standby  standbyState
	// roleMu orders role changes (SetRole), so that two cannot together
	// leave no endpoint able to answer.
	roleMu sync.Mutex
	// rand draws the canary's and the shadows' shares (Options.Rand).
	rand func() float64
	// mirrors are the shadow mirrors in flight, pool-wide (shadow.go).
	mirrors atomic.Int64
	// shadows counts the endpoints that are shadows now (newEndpoint,
	// SetRole): a read plans no mirror without one.
	shadows   atomic.Int32
	stopWatch chan struct{}
	watchDone chan struct{}

	mu          sync.Mutex
	failoverLog map[failoverKey]failoverStat
	warnings    []Warning

	// base is the parent of read attempts' contexts, cancelled at shutdown:
	// the attempts a request leaves running (trials, tail samples) end then.
	base     context.Context
	stopBase context.CancelCauseFunc

	wg        sync.WaitGroup // attempt goroutines, their collectors, mirrors
	gate      trackGate      // closed before Shutdown waits for wg (track)
	rpcSrv    *http.Server
	adminSrv  *http.Server
	rpcLn     net.Listener
	adminLn   net.Listener
	fresh     connTracker // connections that have not sent a request yet
	serveErrs chan error
	demo      *demoLoad   // nil unless [demo] runs
	demoOn    atomic.Bool // the demo load runs (Snapshot reads it)
}

// New builds an engine from cfg as it is (start from Default): an invalid
// value is an error naming its key.
func New(cfg Config, opts Options) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:         cfg,
		now:         opts.Now,
		rand:        opts.Rand,
		log:         opts.Logger,
		methods:     jsonrpc.NewMethodTable(cfg.Chain.Kind, jsonrpc.MethodLists(cfg.Methods)),
		client:      newHTTPClient(),
		byName:      map[string]*endpoint{},
		acct:        newAccounts(),
		failoverLog: map[failoverKey]failoverStat{},
		answers:     newHeldAnswers(cfg.Server.MaxHeldAnswerBytes),
	}
	e.names = newMethodNames(e.methods)
	if e.now == nil {
		e.now = time.Now
	}
	if e.rand == nil {
		e.rand = rand.Float64
	}
	e.filters = newFilterTable(e.now)
	e.affinity = newWriteAffinity(cfg.Router.WriteAffinity)
	e.stopping, e.stop = context.WithCancel(context.Background())
	e.hardStop, e.stopHard = context.WithCancel(context.Background())
	e.base, e.stopBase = context.WithCancelCause(context.Background())
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.started = e.now()
	e.recent = newRecentTraffic(e.now)
	e.trace = newTraceRing(cfg.Server.TraceRequests, len(cfg.Endpoints)+cfg.Hedge.MaxExtra)
	urls := make([]string, 0, len(cfg.Endpoints))
	for _, c := range cfg.Endpoints {
		urls = append(urls, c.URL)
		if c.Proxy != ProxyFromEnv { // a word, not a URL: "env" scrubbed from "environment"
			urls = append(urls, c.Proxy)
		}
	}
	e.scrub = redact.NewScrubber(urls)
	e.events = newEventLog(e.now, e.logEvent)
	e.hedge = newHedger(cfg.Hedge, cfg.Server.StatsWindow, e.now, e.events.add)
	e.hedge.queueing = e.queueing
	e.hedge.maxDelayScale = func(method string) float64 {
		return float64(e.requestTimeout(method)) / float64(cfg.Server.RequestTimeout)
	}
	domains := configuredDomains(cfg.Endpoints)
	for i, c := range cfg.Endpoints {
		ep := newEndpoint(i, c, domains[i], e)
		ep.breaker.SetOpenGate(func(hard bool, why string) bool { return e.allowOpen(ep, hard, why) })
		e.endpoints = append(e.endpoints, ep)
		e.byName[ep.Name] = ep
	}
	e.metrics = newMetrics(e)
	return e, nil
}

func (e *Engine) logEvent(ev Event) {
	e.log.Info("event", "type", string(ev.Type), "actor", string(ev.Actor), "endpoint", ev.Endpoint, "from", ev.From, "to", ev.To, "message", ev.Message)
}

// Config returns the configuration the engine runs with.
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
	s := e.cfg.Server
	// At server.max_conns a connection idle a while makes room, else the
	// one whose request arrives the slowest; else one more is answered 503
	// and closed (the timeouts below see that held ones end).
	rpcLimit := newConnLimitListener(e.rpcLn, s.MaxConns, "server.max_conns", s.ReadTimeout, e.now)
	adminLimit := newConnLimitListener(e.adminLn, s.MaxConns, "server.max_conns", s.ReadTimeout, e.now)
	e.rpcLn, e.adminLn = rpcLimit, adminLimit
	following := func(l *connLimitListener) func(net.Conn, http.ConnState) {
		return func(c net.Conn, state http.ConnState) {
			e.fresh.track(c, state)
			l.noteState(c, state)
		}
	}
	errLog := slog.NewLogLogger(e.log.Handler(), slog.LevelDebug)
	// The RPC server has no ReadTimeout: it would cancel a request served
	// longer than it. readBody puts server.read_timeout on the body alone
	// (closeUnreadBody on a body an answer leaves unread), writeDeadline
	// server.write_timeout on the answer (net/http clears it after each
	// request).
	// followBodies and withConn let the cap take a request whose body
	// arrives too slowly, never one read whole (slowrequest.go).
	e.rpcSrv = &http.Server{Handler: followBodies(e.RPCHandler()), ReadHeaderTimeout: s.ReadTimeout, MaxHeaderBytes: maxHeaderBytes,
		IdleTimeout: s.IdleTimeout, ConnState: following(rpcLimit), ConnContext: withConn, ErrorLog: errLog}
	e.adminSrv = &http.Server{Handler: followBodies(e.AdminHandler()), ReadHeaderTimeout: s.ReadTimeout, ReadTimeout: s.ReadTimeout,
		MaxHeaderBytes: maxHeaderBytes, WriteTimeout: s.WriteTimeout, IdleTimeout: s.IdleTimeout, ConnState: following(adminLimit),
		ConnContext: withConn, ErrorLog: errLog}
	// Once Shutdown has closed the listeners: cut request bodies still
	// arriving, and connections that have sent no request (net/http
	// would wait up to 5 s for each before counting it idle).
	for _, srv := range []*http.Server{e.rpcSrv, e.adminSrv} {
		srv.RegisterOnShutdown(func() {
			e.stop()
			e.fresh.closeAll()
		})
	}
	e.serveErrs = make(chan error, 2)
	e.stopWatch, e.watchDone = make(chan struct{}), make(chan struct{})
	go e.watch(e.stopWatch, e.watchDone)
	go func() { e.serveErrs <- e.rpcSrv.Serve(e.rpcLn) }()
	go func() { e.serveErrs <- e.adminSrv.Serve(e.adminLn) }()
	e.warnIfRemote(e.rpcLn.Addr().String())
	if name := unusedEnvProxy(e.cfg); name != "" {
		e.events.add(Event{Type: EventConfig, Message: name + " is set, and endpoints are reached directly unless their proxy says otherwise: " +
			`behind a proxy that is the only way out, set proxy = "env" on them ([[endpoints]] proxy)`})
	}
	e.log.Info("listening", "rpc", e.rpcLn.Addr().String(), "admin", e.adminLn.Addr().String())
	e.startDemo()
	return nil
}

// warnIfRemote logs that the RPC port, bound at addr, is open to other
// machines (Validate has checked server.allow_remote).
func (e *Engine) warnIfRemote(addr string) {
	if !isLoopbackAddr(e.cfg.Server.Listen) {
		e.log.Warn("server.listen is not a loopback address (server.allow_remote = true): anyone who reaches it can send requests through your endpoints",
			"listen", addr)
	}
}

// RPCAddr and AdminAddr are the bound addresses (after Start).
func (e *Engine) RPCAddr() string   { return e.rpcLn.Addr().String() }
func (e *Engine) AdminAddr() string { return e.adminLn.Addr().String() }

// Shutdown stops taking requests, lets in-flight ones finish within ctx,
// then waits for every attempt goroutine. Request bodies still arriving
// are cut at once (a request not yet received is not in flight); requests
// still served when ctx ends are cut and answered with a JSON-RPC error
// saying rpcdash is shutting down, within shutdownGrace more.
func (e *Engine) Shutdown(ctx context.Context) error {
	var errs []error
	e.stopFaultTimers()
	if e.demo != nil {
		// No new demo requests; those in flight finish like any client's.
		e.demo.stopScheduling()
		e.demoOn.Store(false)
	}
	if e.rpcSrv != nil {
		stopped := make(chan error, 2)
		go func() { stopped <- e.rpcSrv.Shutdown(ctx) }()
		go func() { stopped <- e.adminSrv.Shutdown(ctx) }()
		overran := false
		for range 2 {
			if err := <-stopped; err != nil {
				overran = true
			}
		}
		if overran {
			e.stopHard()
			grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			for _, srv := range []*http.Server{e.rpcSrv, e.adminSrv} {
				if srv.Shutdown(grace) != nil {
					srv.Close()
				}
			}
			cancel()
			errs = append(errs, fmt.Errorf("requests still running at server.shutdown_timeout were cut"))
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
	e.stop()
	e.stopHard()
	if e.demo != nil {
		e.demo.wait()
		e.demo = nil
	}
	// Requests are over: what they left running (trials, tail samples)
	// ends now.
	e.stopBase(errShutdown)
	e.gate.close() // no e.wg.Add after this
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

// shutdownGrace is how long requests cut at the shutdown deadline have to
// write their answer before their connections are closed.
const shutdownGrace = time.Second

// maxHeaderBytes bounds a request's header, for net/http to answer 431
// past it. Its default, 1 MiB, let a header of 120,000 empty lines (890
// KB, within it) cost about 16 MB to parse: 50 such requests at once took
// the process from 20 MB to 873 MB. A JSON-RPC client's header is a few
// hundred bytes, a bearer token a few KB.
const maxHeaderBytes = 64 << 10

// Close is Shutdown bounded by server.shutdown_timeout.
func (e *Engine) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.Server.ShutdownTimeout)
	defer cancel()
	return e.Shutdown(ctx)
}

// errNoEndpoint: the control API or a probe named an endpoint the pool does
// not have.
var errNoEndpoint = errors.New("no endpoint named")

func (e *Engine) endpoint(name string) (*endpoint, error) {
	ep, ok := e.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", errNoEndpoint, name)
	}
	return ep, nil
}
