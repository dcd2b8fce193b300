package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Latency is a service-time model: lognormal around Median, except for a
// TailProb share of requests that take a uniform time in [TailMin, TailMax].
type Latency struct {
	Median           time.Duration
	Sigma            float64
	TailProb         float64
	TailMin, TailMax time.Duration
}

// Sample draws one service time from the model using r.
func (l Latency) Sample(r *rand.Rand) time.Duration {
	if l.TailProb > 0 && r.Float64() < l.TailProb {
		lo, hi := l.TailMin, l.TailMax
		if hi <= lo {
			return lo
		}
		return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
	}
	if l.Sigma <= 0 || l.Median <= 0 {
		return max(l.Median, 0)
	}
	d := float64(l.Median) * math.Exp(l.Sigma*r.NormFloat64())
	if d > math.MaxInt64/2 {
		d = math.MaxInt64 / 2
	}
	return time.Duration(d)
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
	// the usual service time.
	ModeRPCError Mode = "rpc_error"
)

// ParseMode accepts "", "normal", "error", "http429", "hang", "foreign_id"
// and "rpc_error".
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeNormal, ModeError, ModeRateLimit, ModeHang, ModeForeignID, ModeRPCError:
		return Mode(s), nil
	case "normal":
		return ModeNormal, nil
	}
	return "", fmt.Errorf("sim: unknown mode %q (want \"\", error, http429, hang, foreign_id or rpc_error)", s)
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
	Seed          int64         // RNG seed; 0 means time-based
	Unhealthy     bool          // Solana getHealth answers "Node is unhealthy"

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
	if c.BlockTime < 0 || c.RetryAfter < 0 {
		return fmt.Errorf("sim: block time and retry-after must not be negative")
	}
	if c.HeadLag < 0 {
		return fmt.Errorf("sim: head lag %d is negative", c.HeadLag)
	}
	return nil
}

func isShare(p float64) bool { return p >= 0 && p <= 1 }
