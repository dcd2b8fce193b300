package engine

import (
	"net"
	"slices"
	"strings"
	"time"
)

// Config is the whole engine configuration: plain data, with no state of
// its own. Start from Default (every default in place) and change what
// you need; main.go decodes config.toml over Default through viper, so a
// zero the file sets stays zero. New takes it as it is and only reads it.
type Config struct {
	Server    ServerConfig     `mapstructure:"server"`
	Chain     ChainConfig      `mapstructure:"chain"`
	Endpoints []EndpointConfig `mapstructure:"endpoints"`
	Hedge     HedgeConfig      `mapstructure:"hedge"`
	Breaker   BreakerConfig    `mapstructure:"breaker"`
	Router    RouterConfig     `mapstructure:"router"`
	Probes    ProbesConfig     `mapstructure:"probes"`
	Methods   MethodsConfig    `mapstructure:"methods"`
	Demo      DemoConfig       `mapstructure:"demo"`
	UI        UIConfig         `mapstructure:"ui"`
}

type ServerConfig struct {
	Listen         string        `mapstructure:"listen"`
	Admin          string        `mapstructure:"admin"`
	AdminToken     string        `mapstructure:"admin_token"`
	RequestTimeout time.Duration `mapstructure:"request_timeout"`
	MaxBodyBytes   int64         `mapstructure:"max_body_bytes"`
	// MaxHeldBodyBytes bounds the request bodies held at once, as read
	// or decoded (heldBodyLimit); past it a request gets HTTP 503.
	MaxHeldBodyBytes int64         `mapstructure:"max_held_body_bytes"`
	MaxBatch         int           `mapstructure:"max_batch"`
	ShutdownTimeout  time.Duration `mapstructure:"shutdown_timeout"`
	// StatsWindow is how far back the rolling latency and rate windows reach.
	StatsWindow time.Duration `mapstructure:"stats_window"`

	// ReadTimeout bounds reading a request's headers, and then its body;
	// WriteTimeout bounds handing an answer to the client; IdleTimeout
	// closes a keep-alive connection that sends nothing.
	ReadTimeout  time.Duration `mapstructure:"read_timeout"`
	WriteTimeout time.Duration `mapstructure:"write_timeout"`
	IdleTimeout  time.Duration `mapstructure:"idle_timeout"`
	// MaxConns caps open connections per port; MaxInflight caps client
	// requests being read or served at once (HTTP 503 beyond it).
	MaxConns    int `mapstructure:"max_conns"`
	MaxInflight int `mapstructure:"max_inflight"`
	// MaxResponseBytes bounds one upstream answer, and a batch's answers
	// together.
	MaxResponseBytes int64 `mapstructure:"max_response_bytes"`
	// MaxHeldAnswerBytes is what the answers being handed to clients may
	// hold before one whose client stopped reading is cut (heldAnswers).
	MaxHeldAnswerBytes int64 `mapstructure:"max_held_answer_bytes"`
	// VHosts are the Host names both ports answer (nil: AllowedHosts's
	// default; an empty list is refused);
	// CORSOrigins the browser origins they accept ("*" for any).
	VHosts      []string `mapstructure:"vhosts"`
	CORSOrigins []string `mapstructure:"cors_origins"`
	// AllowRemote must be set for server.listen to be a non-loopback
	// address: an open RPC port spends the endpoints' quota for anyone.
	AllowRemote bool `mapstructure:"allow_remote"`
	// TraceRequests is how many of the latest client requests keep their
	// trace (GET /v1/requests); 0 turns tracing off.
	TraceRequests int `mapstructure:"trace_requests"`
}

// AllowedHosts is server.vhosts, or when unset the loopback names and the
// hosts the two ports are configured on. "*" allows any.
func (s ServerConfig) AllowedHosts() []string {
	if len(s.VHosts) > 0 {
		out := make([]string, 0, len(s.VHosts))
		for _, h := range s.VHosts {
			out = append(out, strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]")))
		}
		return out
	}
	out := []string{"localhost", "127.0.0.1", "::1"}
	for _, addr := range []string{s.Listen, s.Admin} {
		if host, _, err := net.SplitHostPort(addr); err == nil && host != "" && !slices.Contains(out, strings.ToLower(host)) {
			out = append(out, strings.ToLower(host))
		}
	}
	return out
}

type ChainConfig struct {
	Kind       string `mapstructure:"kind"`
	MaxHeadLag int64  `mapstructure:"max_head_lag"`
	// Pin is the finality level given to reads that name none ("" or
	// pinOff: none); PinLevel is the one in force.
	Pin string `mapstructure:"pin"`
	// ChainID (EVM) and GenesisHash (Solana) name the chain the pool must be
	// on; unset, the majority of the endpoints' first answers decides.
	ChainID     uint64 `mapstructure:"chain_id"`
	GenesisHash string `mapstructure:"genesis_hash"`
}

// pinOff is chain.pin's default written out: no pinning, as unset.
const pinOff = "off"

// pinLevels are the finality levels chain.pin takes, by chain.kind.
var pinLevels = map[string][]string{"evm": {"finalized", "safe"}, "solana": {"finalized", "confirmed"}}

// PinLevel is the finality level reads are pinned to, "" for none.
func (c ChainConfig) PinLevel() string {
	if c.Pin == pinOff {
		return ""
	}
	return c.Pin
}

type EndpointConfig struct {
	Name     string `mapstructure:"name"`
	URL      string `mapstructure:"url"`
	Provider string `mapstructure:"provider"`
	Region   string `mapstructure:"region"`
	// PublicURL marks a URL that carries no credential: its path and
	// query are shown. Otherwise only scheme, host and port are.
	PublicURL bool `mapstructure:"public_url"`
	// Role is RolePrimary (empty means primary), RoleStandby (client
	// traffic only when the primaries cannot, standby.go), RoleShadow
	// (mirrored reads only, never answers, shadow.go) or RoleCanary (Share
	// of first attempts of reads, otherwise a standby, canary.go).
	Role string `mapstructure:"role"`
	// Share is a canary's share of client reads whose first attempt it
	// takes, or the share of client reads mirrored to a shadow; nil is the
	// role's default (defaultShare). Only canaries and shadows take one.
	Share *float64 `mapstructure:"share"`
	// Proxy is how the endpoint is reached: "" directly (environment
	// proxies are not read: an RPC router's latency and independence
	// checks are of the path it measures), ProxyFromEnv the environment's
	// HTTPS_PROXY/HTTP_PROXY/NO_PROXY, or an http, https or socks5 proxy
	// URL (its user info is a credential, never shown).
	Proxy string `mapstructure:"proxy"`
}

// ProxyFromEnv is the [[endpoints]] proxy value that takes the
// environment's proxy settings.
const ProxyFromEnv = "env"

// Endpoint roles ([[endpoints]] role).
const (
	RolePrimary = "primary"
	RoleStandby = "standby"
	RoleShadow  = "shadow"
	RoleCanary  = "canary"
)

// Roles lists the endpoint roles, in the order messages name them.
var Roles = []string{RolePrimary, RoleStandby, RoleShadow, RoleCanary}

// defaultShare is the share a role takes when none is given: 0.05 of first
// attempts for a canary, every read mirrored for a shadow, none otherwise.
func defaultShare(role string) float64 {
	switch role {
	case RoleCanary:
		return 0.05
	case RoleShadow:
		return 1
	}
	return 0
}

// TakesShare says whether the role has a share (canary, shadow).
func TakesShare(role string) bool { return role == RoleCanary || role == RoleShadow }

// RoleName is the role, with "" read as RolePrimary.
func (c EndpointConfig) RoleName() string {
	if c.Role == "" {
		return RolePrimary
	}
	return c.Role
}

// ShareOrDefault is the endpoint's share, its role's default when unset.
func (c EndpointConfig) ShareOrDefault() float64 {
	if c.Share != nil && TakesShare(c.RoleName()) {
		return *c.Share
	}
	return defaultShare(c.RoleName())
}

type HedgeConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Delay is "auto" (the Quantile of the method's latency) or a duration.
	Delay    string  `mapstructure:"delay"`
	Quantile float64 `mapstructure:"quantile"`
	MaxExtra int     `mapstructure:"max_extra"`
	// SameDomain lets a hedge go to an endpoint of a failure domain a live
	// attempt of the request is in (the same endpoint included), when no
	// other domain is left. False: such a hedge is not sent (the hedging
	// seed: hedging against a provider's redundant endpoints that share fate
	// buys nothing and costs the budget).
	SameDomain     bool          `mapstructure:"same_domain"`
	Budget         float64       `mapstructure:"budget"`
	BudgetBurst    float64       `mapstructure:"budget_burst"`
	MinDelay       time.Duration `mapstructure:"min_delay"`
	MaxDelay       time.Duration `mapstructure:"max_delay"`
	ColdDelay      time.Duration `mapstructure:"cold_delay"`
	MinSamples     int           `mapstructure:"min_samples"`
	MaxOutstanding int           `mapstructure:"max_outstanding"`
	MaxInflight    int           `mapstructure:"max_inflight"`
	PauseErrorRate float64       `mapstructure:"pause_error_rate"`
	// PauseLatencyRatio pauses hedging while most endpoints answer at this
	// multiple of their usual median at once (queueing.go); 0 turns it off.
	PauseLatencyRatio float64 `mapstructure:"pause_latency_ratio"`
	// Methods holds per-method overrides, keyed by lower-cased method name
	// (viper lower-cases keys; lookups are case-insensitive for that reason).
	Methods map[string]HedgeMethodConfig `mapstructure:"methods"`
}

type HedgeMethodConfig struct {
	Enabled  *bool   `mapstructure:"enabled"`
	Delay    string  `mapstructure:"delay"`
	Quantile float64 `mapstructure:"quantile"`
}

type BreakerConfig struct {
	Failures    int           `mapstructure:"failures"`
	Cooldown    time.Duration `mapstructure:"cooldown"`
	MaxCooldown time.Duration `mapstructure:"max_cooldown"`
	Successes   int           `mapstructure:"successes"`
	// HalfOpenTrials is how many trial requests may be in flight at once
	// while half-open.
	HalfOpenTrials int `mapstructure:"half_open_trials"`
	// An attempt's own deadline is AttemptTimeoutFactor times the
	// AttemptTimeoutQuantile of the endpoint's recent latency for the
	// method, clamped to [AttemptTimeoutMin, server.request_timeout].
	AttemptTimeoutMin      time.Duration `mapstructure:"attempt_timeout_min"`
	AttemptTimeoutQuantile float64       `mapstructure:"attempt_timeout_quantile"`
	AttemptTimeoutFactor   float64       `mapstructure:"attempt_timeout_factor"`
	// A 429 without Retry-After backs off BackoffBase·2^streak, at most
	// BackoffMax; a Retry-After is honoured up to BackoffMax (see backoff.go).
	BackoffBase time.Duration `mapstructure:"backoff_base"`
	BackoffMax  time.Duration `mapstructure:"backoff_max"`
	// MaxOpenShare caps the share of the pool that breakers may hold open
	// at once on soft evidence (at least one endpoint always stays
	// eligible; 1 lifts the cap). A refused connection is not capped.
	MaxOpenShare float64 `mapstructure:"max_open_share"`
}

type RouterConfig struct {
	// Tolerance: endpoints whose cost is within this share of the best one
	// are treated as equals and share traffic.
	Tolerance float64 `mapstructure:"tolerance"`
	// ErrorPenalty scales how much the recent failure rate raises the cost.
	ErrorPenalty float64 `mapstructure:"error_penalty"`
	// TailPenalty scales how much the share of an endpoint's answers far
	// past its usual pace (its tail) raises the cost.
	TailPenalty float64 `mapstructure:"tail_penalty"`
	// LagPenalty is the cost added per block of head lag.
	LagPenalty time.Duration `mapstructure:"lag_penalty"`
	// ExploreAfter: a healthy endpoint that has served no read for this long
	// is explored, to refresh its measurements: by a hedge beside the next
	// read where the method is hedged, else by the read itself when its
	// head probes say its figure may be out of date (explore.go).
	ExploreAfter time.Duration `mapstructure:"explore_after"`
	// PanicThreshold: below this share of routable endpoints (of those not
	// drained nor on the wrong chain), requests are routed across all of
	// them, least bad first, rather than refused (0 turns it off).
	PanicThreshold float64 `mapstructure:"panic_threshold"`
	// WriteAffinity is how long after a write an endpoint answered the
	// client's later writes and the reads that must see them go to that
	// endpoint first (affinity.go); 0 turns it off.
	WriteAffinity time.Duration `mapstructure:"write_affinity"`
	// PromoteMatchRate is the least shadow comparison match_rate on which
	// a role change that puts an endpoint in front of more clients is
	// taken without "force" (promote.go); 0 turns that check off.
	PromoteMatchRate float64 `mapstructure:"promote_match_rate"`
}

type ProbesConfig struct {
	Enabled              bool          `mapstructure:"enabled"`
	Interval             time.Duration `mapstructure:"interval"`
	Timeout              time.Duration `mapstructure:"timeout"`
	Recover              int           `mapstructure:"recover"`
	IndependenceInterval time.Duration `mapstructure:"independence_interval"`
	// ASN is "cymru" (Team Cymru DNS), "db" (ASNDB file) or "off"; unset,
	// it is "db" when asn_db names a file and "cymru" otherwise.
	ASN      string `mapstructure:"asn"`
	ASNDB    string `mapstructure:"asn_db"`
	Resolver string `mapstructure:"resolver"`
	// IdentityEvery is how many rounds apart an endpoint is asked its chain
	// identity (eth_chainId, getGenesisHash) besides at start and on
	// reconnect: an endpoint moved to another chain while it goes on
	// answering is otherwise found out only by a client's own identity
	// request (probes/prober.go).
	IdentityEvery int `mapstructure:"identity_every"`
}

// MethodsConfig extends the built-in method tables.
type MethodsConfig struct {
	Writes   []string `mapstructure:"writes"`
	Stateful []string `mapstructure:"stateful"`
	Reads    []string `mapstructure:"reads"`
	NoHedge  []string `mapstructure:"no_hedge"`
	// Weights are cost units per method (lower-cased keys), for the hedge
	// budget; a method not listed weighs 1.
	Weights map[string]float64 `mapstructure:"weights"`
	// Timeouts are request deadlines per method (lower-cased keys), in
	// place of server.request_timeout and the built-in deadline of long
	// reads.
	Timeouts map[string]time.Duration `mapstructure:"timeouts"`
}

// DemoConfig is the built-in demo load: light, read-only traffic sent by
// rpcdash into its own RPC port so that a fresh clone shows a live pool.
type DemoConfig struct {
	Enabled bool    `mapstructure:"enabled"`
	Rate    float64 `mapstructure:"rate"` // requests per second
	// Mix is the read methods sent, "method" or "method:weight" (weight 1
	// when left out); empty, a mix of common reads of chain.kind.
	Mix []string `mapstructure:"mix"`
}

// UIConfig is the console's: the engine only carries it.
type UIConfig struct {
	Theme   string        `mapstructure:"theme"`   // an embedded theme ("dark", "light", "contrast") or a .toml file
	Refresh time.Duration `mapstructure:"refresh"` // how often the console asks for a Snapshot
}

// ASNMode is how ASNs are looked up: probes.asn when set, else "db" when
// probes.asn_db names a database (naming one is asking for it), else
// "cymru".
func (p ProbesConfig) ASNMode() string {
	switch {
	case p.ASN != "":
		return p.ASN
	case p.ASNDB != "":
		return "db"
	}
	return "cymru"
}
