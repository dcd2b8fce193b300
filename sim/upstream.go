package sim

import (
	"errors"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Upstream is one simulated JSON-RPC node. Its setters are safe for
// concurrent use while it serves.
type Upstream struct {
	cfg Config

	mu  sync.RWMutex // guards set
	set settings

	// Separate generators keep latencies reproducible whatever the fault
	// shares are.
	rngMu    sync.Mutex
	latRNG   *rand.Rand
	faultRNG *rand.Rand
	queue    admission

	counters counterState
	records  recordState
	lastID   lastID // mode foreign_id
	filters  filterState

	life    sync.Mutex // guards srv, ln, closed and adds to handlers
	srv     *http.Server
	ln      net.Listener
	closed  bool
	closing chan struct{} // closed by Close to release sleeping and hung handlers
	served  chan struct{} // closed when Serve returns
	handler sync.WaitGroup
}

type settings struct {
	mode          Mode
	extra         time.Duration
	methodExtra   map[string]time.Duration // SetMethodLatency; replaced, never changed in place
	latency       Latency
	errorRate     float64
	rateLimitRate float64
	retryAfter    time.Duration
	limited       []string // RateLimitMethods (nil: every method)
	headLag       int64
	frozen        bool
	frozenAt      int64
	fixedHead     int64 // reported whatever the chain does (0 = follow the chain)
	headAhead     int64 // blocks/slots reported beyond the true head
	unhealthy     bool
	hostile       hostileSettings
	rpcErrCode    int
	rpcErrMsg     string
	rpcErrMethods []string // RPCErrorMethods (nil: every method)
}

// New builds an upstream from cfg with defaults filled in; Start serves it.
func New(cfg Config) *Upstream {
	cfg = cfg.withDefaults()
	latRNG, faultRNG := newRNGs(cfg.Seed)
	return &Upstream{
		cfg: cfg,
		set: settings{
			latency:       cfg.Latency,
			errorRate:     cfg.ErrorRate,
			rateLimitRate: cfg.RateLimitRate,
			retryAfter:    cfg.RetryAfter,
			limited:       slices.Clone(cfg.RateLimitMethods),
			headLag:       max(cfg.HeadLag, 0),
			unhealthy:     cfg.Unhealthy,
			rpcErrCode:    DefaultRPCErrorCode,
			rpcErrMsg:     DefaultRPCErrorMessage,
			rpcErrMethods: slices.Clone(cfg.RPCErrorMethods),
		},
		latRNG:   latRNG,
		faultRNG: faultRNG,
		counters: newCounterState(),
		records:  newRecordState(),
		filters:  filterState{ids: map[string]bool{}},
		closing:  make(chan struct{}),
		served:   make(chan struct{}),
	}
}

// Config returns the configuration with defaults filled in.
func (u *Upstream) Config() Config { return u.cfg }

// Name is Config.Name.
func (u *Upstream) Name() string { return u.cfg.Name }

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
func (u *Upstream) Start(addr string) error {
	if err := u.cfg.Validate(); err != nil {
		return err
	}
	u.life.Lock()
	defer u.life.Unlock()
	if u.closed {
		return errors.New("sim: upstream already closed")
	}
	if u.ln != nil {
		return errors.New("sim: upstream already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	u.ln = ln
	u.srv = &http.Server{
		Handler:           u,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(u.served)
		_ = u.srv.Serve(ln)
	}()
	return nil
}

// URL is "http://host:port" once started, "" before.
func (u *Upstream) URL() string {
	u.life.Lock()
	defer u.life.Unlock()
	if u.ln == nil {
		return ""
	}
	return "http://" + u.ln.Addr().String()
}

// Close stops the server, releases hung and sleeping handlers, and returns
// once every handler goroutine has finished. It is safe to call twice.
func (u *Upstream) Close() error {
	u.life.Lock()
	if u.closed {
		u.life.Unlock()
		return nil
	}
	u.closed = true
	srv := u.srv
	u.life.Unlock()

	// Release handlers before closing connections so they abort rather than
	// count a cancellation that the client never made.
	close(u.closing)
	var err error
	if srv != nil {
		err = srv.Close()
		<-u.served
	}
	u.handler.Wait()
	return err
}

// enter registers a handler goroutine unless the upstream is closing; the
// Add happens under life so it can never race with Close's Wait.
func (u *Upstream) enter() bool {
	u.life.Lock()
	defer u.life.Unlock()
	if u.closed {
		return false
	}
	u.handler.Add(1)
	return true
}

func (u *Upstream) snapshot() settings {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.set
}

func (u *Upstream) update(f func(*settings)) {
	u.mu.Lock()
	f(&u.set)
	u.mu.Unlock()
}

// SetMode switches the fault mode; it applies to requests arriving after.
func (u *Upstream) SetMode(m Mode) { u.update(func(s *settings) { s.mode = m }) }

// Mode is the current fault mode.
func (u *Upstream) Mode() Mode { return u.snapshot().mode }

// SetExtraLatency adds d to the service time of every served request.
func (u *Upstream) SetExtraLatency(d time.Duration) {
	u.update(func(s *settings) { s.extra = max(d, 0) })
}

// SetMethodLatency adds d to the service time of requests that carry
// method (a batch takes the most any of its calls adds), as a node's traces
// or wide log queries take seconds while its other reads take milliseconds;
// 0 removes it.
func (u *Upstream) SetMethodLatency(method string, d time.Duration) {
	u.update(func(s *settings) {
		m := maps.Clone(s.methodExtra)
		if m == nil {
			m = map[string]time.Duration{}
		}
		if d > 0 {
			m[method] = d
		} else {
			delete(m, method)
		}
		s.methodExtra = m
	})
}

// SetLatency replaces the service-time model.
func (u *Upstream) SetLatency(l Latency) { u.update(func(s *settings) { s.latency = l }) }

// SetErrorRate sets the share of requests answered HTTP 500.
func (u *Upstream) SetErrorRate(p float64) {
	u.update(func(s *settings) { s.errorRate = clampShare(p) })
}

// SetRateLimitRate sets the share of requests answered HTTP 429.
func (u *Upstream) SetRateLimitRate(p float64) {
	u.update(func(s *settings) { s.rateLimitRate = clampShare(p) })
}

// SetRetryAfter sets the Retry-After of 429 answers; 0 omits the header.
func (u *Upstream) SetRetryAfter(d time.Duration) {
	u.update(func(s *settings) { s.retryAfter = max(d, 0) })
}

// SetRateLimitMethods confines the 429s to requests carrying one of the
// methods; none (nil or empty) rate-limits every method.
func (u *Upstream) SetRateLimitMethods(methods []string) {
	u.update(func(s *settings) { s.limited = slices.Clone(methods) })
}

// SetHostile sets the hostile modes' answer size, trickle pace and junk
// length; zero values keep the defaults.
func (u *Upstream) SetHostile(hugeBytes int64, trickleInterval time.Duration, junkBytes int) {
	u.update(func(s *settings) {
		s.hostile = hostileSettings{hugeBytes: hugeBytes, trickleInterval: trickleInterval, junkBytes: junkBytes}
	})
}

// SetRPCError sets the error that mode rpc_error answers with.
func (u *Upstream) SetRPCError(code int, message string) {
	u.update(func(s *settings) { s.rpcErrCode, s.rpcErrMsg = code, message })
}

// SetRPCErrorMethods confines mode rpc_error to calls of the methods; none
// (nil or empty) answers every call with the error.
func (u *Upstream) SetRPCErrorMethods(methods []string) {
	u.update(func(s *settings) { s.rpcErrMethods = slices.Clone(methods) })
}

// RPCError is the error that mode rpc_error answers with.
func (u *Upstream) RPCError() (code int, message string) {
	s := u.snapshot()
	return s.rpcErrCode, s.rpcErrMsg
}

// SetUnhealthy makes Solana getHealth answer the node-unhealthy error.
func (u *Upstream) SetUnhealthy(b bool) { u.update(func(s *settings) { s.unhealthy = b }) }

func clampShare(p float64) float64 {
	if !(p > 0) {
		return 0
	}
	return min(p, 1)
}

func newRNGs(seed int64) (latency, fault *rand.Rand) {
	s := uint64(seed)
	return rand.New(rand.NewPCG(s, 0x6c6174656e6379)), rand.New(rand.NewPCG(s, 0x6661756c7473))
}

// sampleLatency draws the next service time.
func (u *Upstream) sampleLatency(l Latency) time.Duration {
	u.rngMu.Lock()
	defer u.rngMu.Unlock()
	return l.Sample(u.latRNG)
}

func (u *Upstream) faultDraw() float64 {
	u.rngMu.Lock()
	defer u.rngMu.Unlock()
	return u.faultRNG.Float64()
}
