package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"
)

// Latency is a service-time model: lognormal around Median, except for a
// TailProb share of requests that take a uniform time in [TailMin, TailMax].
//
// Correlated is the share Q of those tail events that are shared: every
// upstream with the same incident schedule is slow at once, for windows of
// Incident length on one clock (see Incidents). The windows cover a share
// Q·TailProb of the time, every answer begun in one takes a tail time, and
// outside them tails are drawn independently with the probability that
// keeps the overall tail share at TailProb. Q = 0 is fully independent.
type Latency struct {
	Median           time.Duration
	Sigma            float64
	TailProb         float64
	TailMin, TailMax time.Duration
	Correlated       float64
	Incident         time.Duration // window length; DefaultIncident when Correlated > 0 and unset
}

// DefaultIncident is the length of a shared slow window when none is given.
const DefaultIncident = 200 * time.Millisecond

// Sample draws one service time from the model using r, outside any
// incident window.
func (l Latency) Sample(r *rand.Rand) time.Duration {
	d, _ := l.draw(r)
	return d
}

// draw is Sample that also says whether the time is a tail time.
func (l Latency) draw(r *rand.Rand) (time.Duration, bool) {
	if p := l.independentTail(); p > 0 && r.Float64() < p {
		return l.tail(r), true
	}
	if l.Sigma <= 0 || l.Median <= 0 {
		return max(l.Median, 0), false
	}
	d := float64(l.Median) * math.Exp(l.Sigma*r.NormFloat64())
	if d > math.MaxInt64/2 {
		d = math.MaxInt64 / 2
	}
	return time.Duration(d), false
}

func (l Latency) tail(r *rand.Rand) time.Duration {
	lo, hi := l.TailMin, l.TailMax
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
}

// sharedShare is the share of time inside incident windows: Q·TailProb.
func (l Latency) sharedShare() float64 { return l.Correlated * l.TailProb }

// independentTail is the tail probability outside incident windows,
// TailProb·(1−Q)/(1−Q·TailProb), so that the tail share over all answers
// stays TailProb.
func (l Latency) independentTail() float64 {
	p := l.sharedShare()
	if p >= 1 {
		return 0
	}
	return l.TailProb * (1 - l.Correlated) / (1 - p)
}

func (l Latency) withDefaults() Latency {
	if l.Correlated > 0 && l.Incident <= 0 {
		l.Incident = DefaultIncident
	}
	return l
}

func (l Latency) validate() error {
	switch {
	case l.Median < 0:
		return fmt.Errorf("sim: latency median %v is negative", l.Median)
	case l.Sigma < 0 || math.IsNaN(l.Sigma):
		return fmt.Errorf("sim: latency sigma %v is negative", l.Sigma)
	case l.TailProb < 0 || l.TailProb > 1:
		return fmt.Errorf("sim: latency tail probability %v is outside [0,1]", l.TailProb)
	case l.TailProb > 0 && (l.TailMin < 0 || l.TailMax < l.TailMin):
		return fmt.Errorf("sim: latency tail range [%v,%v] is invalid", l.TailMin, l.TailMax)
	case !isShare(l.Correlated):
		return fmt.Errorf("sim: correlated share %v is outside [0,1]", l.Correlated)
	case l.Correlated > 0 && l.TailProb <= 0:
		return fmt.Errorf("sim: correlated %v shares tail events, but the tail probability is 0", l.Correlated)
	case l.Incident < 0:
		return fmt.Errorf("sim: incident length %v is negative", l.Incident)
	}
	return nil
}

// Mode is a whole-upstream fault mode.
type Mode string

const (
	ModeNormal    Mode = ""        // serve normally
	ModeError     Mode = "error"   // answer HTTP 500 with a JSON-RPC error body
	ModeRateLimit Mode = "http429" // answer HTTP 429 with Retry-After when Config.RetryAfter > 0
	ModeHang      Mode = "hang"    // read the body, then never answer until the client cancels or the server closes
	// ModeForeignID answers normally but with another request's id: the
	// previous request's, or for a batch each element's neighbour's.
	ModeForeignID Mode = "foreign_id"
	// ModeRPCError answers every call HTTP 200 with a server-side JSON-RPC
	// error (by default -32603 "missing trie node"; see SetRPCError), after
	// the usual service time; only calls of Config.RPCErrorMethods when set.
	ModeRPCError Mode = "rpc_error"
)

// ParseMode accepts "", "normal", "error", "http429", "hang", "foreign_id",
// "rpc_error" and the hostile modes ("huge_answer", "trickle",
// "malformed_status").
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeNormal, ModeError, ModeRateLimit, ModeHang, ModeForeignID, ModeRPCError:
		return Mode(s), nil
	case ModeHugeAnswer, ModeTrickle, ModeMalformedStatus:
		return Mode(s), nil
	case "normal":
		return ModeNormal, nil
	}
	return "", fmt.Errorf("sim: unknown mode %q (want \"\", error, http429, hang, foreign_id, rpc_error, huge_answer, trickle or malformed_status)", s)
}

// Default error of ModeRPCError.
const (
	DefaultRPCErrorCode    = CodeInternal
	DefaultRPCErrorMessage = "missing trie node"
)

// Chain kinds.
const (
	ChainEVM    = "evm"
	ChainSolana = "solana"
)

// Config describes one simulated upstream.
type Config struct {
	Name          string
	Chain         string // "evm" (default) or "solana"
	ChainID       uint64 // EVM chain id, default 31337; the Solana genesis hash derives from it
	Latency       Latency
	BlockTime     time.Duration // default 1s (evm) or 400ms (solana)
	HeadLag       int64         // blocks/slots behind the shared true head
	ErrorRate     float64       // share of requests answered HTTP 500
	RateLimitRate float64       // share of requests answered HTTP 429
	RetryAfter    time.Duration // Retry-After on 429 answers, rounded up to whole seconds; omitted when 0
	// RateLimitMethods, when set, confines the 429s (mode http429 and
	// RateLimitRate) to HTTP requests that carry one of these methods, as a
	// provider's per-method limit does; the others are served normally.
	RateLimitMethods []string
	// RPCErrorMethods, when set, confines mode rpc_error to calls of these
	// methods (each element of a batch on its own), as a node that does
	// not serve a method answers it; the others are served normally.
	RPCErrorMethods []string
	Seed            int64 // RNG seed; 0 means time-based
	Unhealthy       bool  // Solana getHealth answers "Node is unhealthy"
	// SequentialFilterIDs numbers this upstream's filters 0x1, 0x2, … as
	// many nodes do, so that upstreams hand out the same ids; by default
	// ids are unique across every upstream of the process.
	SequentialFilterIDs bool

	// Capacity is how many requests per second the upstream serves before
	// it queues (0: no limit). See admission.
	Capacity float64
	// IncidentSeed places the shared incident windows; upstreams that are to
	// be slow together share it (and Epoch), whatever their own Seed.
	IncidentSeed int64
	// Epoch is the origin of the incident clock; nil is the Unix epoch.
	Epoch *Epoch

	// Clock replaces time.Now for the head and block timestamps; tests
	// inject one so that heads are deterministic.
	Clock func() time.Time
}

const defaultChainID = 31337

var seedSeq atomic.Int64

func (c Config) withDefaults() Config {
	if c.Chain == "" {
		c.Chain = ChainEVM
	}
	if c.ChainID == 0 {
		c.ChainID = defaultChainID
	}
	if c.BlockTime <= 0 {
		c.BlockTime = time.Second
		if c.Chain == ChainSolana {
			c.BlockTime = 400 * time.Millisecond
		}
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	c.Latency = c.Latency.withDefaults()
	if c.Seed == 0 {
		// The sequence keeps upstreams built in the same instant apart.
		c.Seed = time.Now().UnixNano() + seedSeq.Add(1)*1_000_003
	}
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.Chain != "" && c.Chain != ChainEVM && c.Chain != ChainSolana {
		return fmt.Errorf("sim: unknown chain %q (want evm or solana)", c.Chain)
	}
	if err := c.Latency.validate(); err != nil {
		return err
	}
	if !isShare(c.ErrorRate) || !isShare(c.RateLimitRate) {
		return fmt.Errorf("sim: error rate %v and rate-limit rate %v must be in [0,1]", c.ErrorRate, c.RateLimitRate)
	}
	for _, m := range c.RateLimitMethods {
		if m == "" {
			return fmt.Errorf("sim: rate-limit methods hold an empty name")
		}
	}
	if slices.Contains(c.RPCErrorMethods, "") {
		return fmt.Errorf("sim: rpc-error methods hold an empty name")
	}
	if c.BlockTime < 0 || c.RetryAfter < 0 {
		return fmt.Errorf("sim: block time and retry-after must not be negative")
	}
	if c.HeadLag < 0 {
		return fmt.Errorf("sim: head lag %d is negative", c.HeadLag)
	}
	if c.Capacity < 0 || math.IsNaN(c.Capacity) || math.IsInf(c.Capacity, 0) {
		return fmt.Errorf("sim: capacity %v must be a non-negative number of requests per second", c.Capacity)
	}
	return nil
}

func isShare(p float64) bool { return p >= 0 && p <= 1 }
