package engine

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Config is the whole engine configuration. It is plain data: main.go fills
// it from config.toml through viper, the engine only reads it.
type Config struct {
	Server    ServerConfig     `mapstructure:"server"`
	Chain     ChainConfig      `mapstructure:"chain"`
	Endpoints []EndpointConfig `mapstructure:"endpoints"`
	Hedge     HedgeConfig      `mapstructure:"hedge"`
	Breaker   BreakerConfig    `mapstructure:"breaker"`
	Router    RouterConfig     `mapstructure:"router"`
	Probes    ProbesConfig     `mapstructure:"probes"`
	Methods   MethodsConfig    `mapstructure:"methods"`

	// defaulted: SetDefaults has run, so zeros left now are explicit.
	defaulted bool
}

// DefaultConfig is the configuration with every default in place, hedging
// and probes on. Decode a file over it, and the zeros the file sets stay
// zero (hedge.max_extra = 0, chain.max_head_lag = 0 ...).
func DefaultConfig() Config {
	var c Config
	c.Hedge.Enabled = true
	c.Probes.Enabled = true
	c.SetDefaults()
	return c
}

type ServerConfig struct {
	Listen          string        `mapstructure:"listen"`
	Admin           string        `mapstructure:"admin"`
	AdminToken      string        `mapstructure:"admin_token"`
	RequestTimeout  time.Duration `mapstructure:"request_timeout"`
	MaxBodyBytes    int64         `mapstructure:"max_body_bytes"`
	MaxBatch        int           `mapstructure:"max_batch"`
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// StatsWindow is how far back the rolling latency and rate windows reach.
	StatsWindow time.Duration `mapstructure:"stats_window"`
}

type ChainConfig struct {
	Kind       string `mapstructure:"kind"`
	MaxHeadLag int64  `mapstructure:"max_head_lag"`
	// Pin is the finality level given to reads that name none ("" = off).
	Pin string `mapstructure:"pin"`
	// ChainID (EVM) and GenesisHash (Solana) name the chain the pool must be
	// on; unset, the majority of the endpoints' first answers decides.
	ChainID     uint64 `mapstructure:"chain_id"`
	GenesisHash string `mapstructure:"genesis_hash"`
}

type EndpointConfig struct {
	Name     string `mapstructure:"name"`
	URL      string `mapstructure:"url"`
	Provider string `mapstructure:"provider"`
	Region   string `mapstructure:"region"`
}

type HedgeConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Delay is "auto" (the Quantile of the method's latency) or a duration.
	Delay          string        `mapstructure:"delay"`
	Quantile       float64       `mapstructure:"quantile"`
	MaxExtra       int           `mapstructure:"max_extra"`
	Budget         float64       `mapstructure:"budget"`
	BudgetBurst    float64       `mapstructure:"budget_burst"`
	MinDelay       time.Duration `mapstructure:"min_delay"`
	MaxDelay       time.Duration `mapstructure:"max_delay"`
	ColdDelay      time.Duration `mapstructure:"cold_delay"`
	MinSamples     int           `mapstructure:"min_samples"`
	MaxOutstanding int           `mapstructure:"max_outstanding"`
	MaxInflight    int           `mapstructure:"max_inflight"`
	PauseErrorRate float64       `mapstructure:"pause_error_rate"`
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
	// BackoffBase and BackoffMax bound the back-off after a 429 without
	// Retry-After.
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
	// LagPenalty is the cost added per block of head lag.
	LagPenalty time.Duration `mapstructure:"lag_penalty"`
	// ExploreAfter: a healthy endpoint that has served no read for this long
	// gets the next one, to refresh its measurements.
	ExploreAfter time.Duration `mapstructure:"explore_after"`
	// PanicThreshold: below this share of routable endpoints (of those not
	// drained nor on the wrong chain), requests are routed across all of
	// them, least bad first, rather than refused (0 turns it off).
	PanicThreshold float64 `mapstructure:"panic_threshold"`
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
}

// SetDefaults fills every zero value with a default that works. It runs
// once: on a config that came from DefaultConfig it changes nothing.
func (c *Config) SetDefaults() {
	if c.defaulted {
		return
	}
	c.defaulted = true
	s := &c.Server
	def(&s.Listen, "127.0.0.1:8545")
	def(&s.Admin, "127.0.0.1:8546")
	def(&s.RequestTimeout, 10*time.Second)
	def(&s.MaxBodyBytes, 5<<20)
	def(&s.MaxBatch, 100)
	def(&s.ShutdownTimeout, 10*time.Second)
	def(&s.StatsWindow, 5*time.Minute)

	def(&c.Chain.Kind, "evm")
	def(&c.Chain.MaxHeadLag, 5)

	h := &c.Hedge
	def(&h.Delay, "auto")
	def(&h.Quantile, 0.95)
	def(&h.MaxExtra, 1)
	def(&h.Budget, 0.10)
	def(&h.BudgetBurst, 10)
	def(&h.MinDelay, 5*time.Millisecond)
	def(&h.MaxDelay, 2*time.Second)
	def(&h.ColdDelay, 250*time.Millisecond)
	def(&h.MinSamples, 20)
	def(&h.MaxOutstanding, 50)
	def(&h.MaxInflight, 500)
	def(&h.PauseErrorRate, 0.2)

	b := &c.Breaker
	def(&b.Failures, 3)
	def(&b.Cooldown, 10*time.Second)
	def(&b.MaxCooldown, 5*time.Minute)
	def(&b.Successes, 3)
	def(&b.HalfOpenTrials, 1)
	def(&b.AttemptTimeoutMin, 250*time.Millisecond)
	def(&b.AttemptTimeoutQuantile, 0.99)
	def(&b.AttemptTimeoutFactor, 3)
	def(&b.BackoffBase, time.Second)
	def(&b.BackoffMax, time.Minute)
	def(&b.MaxOpenShare, 0.5)

	r := &c.Router
	def(&r.Tolerance, 0.25)
	def(&r.ErrorPenalty, 10)
	def(&r.LagPenalty, 50*time.Millisecond)
	def(&r.ExploreAfter, 5*time.Second)
	def(&r.PanicThreshold, 0.5)

	p := &c.Probes
	def(&p.Interval, 5*time.Second)
	def(&p.Timeout, 2*time.Second)
	def(&p.Recover, 3)
	def(&p.IndependenceInterval, 10*time.Minute)
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

func def[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Validate reports the first invalid value, naming its config key.
func (c *Config) Validate() error {
	var errs []string
	bad := func(key, format string, args ...any) {
		errs = append(errs, key+": "+fmt.Sprintf(format, args...))
	}
	for _, a := range []struct{ key, addr string }{{"server.listen", c.Server.Listen}, {"server.admin", c.Server.Admin}} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			bad(a.key, "not a host:port address: %q", a.addr)
		}
	}
	if c.Server.Admin != "" && !IsLoopbackAddr(c.Server.Admin) && c.Server.AdminToken == "" {
		bad("server.admin_token", "required when server.admin (%s) is not a loopback address", c.Server.Admin)
	}
	positive := func(key string, d time.Duration) {
		if d <= 0 {
			bad(key, "must be a positive duration, got %s", d)
		}
	}
	positive("server.request_timeout", c.Server.RequestTimeout)
	positive("server.shutdown_timeout", c.Server.ShutdownTimeout)
	positive("server.stats_window", c.Server.StatsWindow)
	if c.Server.MaxBodyBytes <= 0 {
		bad("server.max_body_bytes", "must be positive")
	}
	if c.Server.MaxBatch <= 0 {
		bad("server.max_batch", "must be positive")
	}
	switch c.Chain.Kind {
	case "evm", "solana":
	default:
		bad("chain.kind", "must be \"evm\" or \"solana\", got %q", c.Chain.Kind)
	}
	if c.Chain.ChainID != 0 && c.Chain.Kind != "evm" {
		bad("chain.chain_id", "applies to chain.kind \"evm\"; use chain.genesis_hash for solana")
	}
	if c.Chain.GenesisHash != "" && c.Chain.Kind != "solana" {
		bad("chain.genesis_hash", "applies to chain.kind \"solana\"; use chain.chain_id for evm")
	}
	if c.Chain.MaxHeadLag < 0 {
		bad("chain.max_head_lag", "must not be negative")
	}
	switch {
	case c.Chain.Pin == "":
	case c.Chain.Kind == "evm" && (c.Chain.Pin == "finalized" || c.Chain.Pin == "safe"):
	case c.Chain.Kind == "solana" && (c.Chain.Pin == "finalized" || c.Chain.Pin == "confirmed"):
	default:
		bad("chain.pin", "%q is not a finality level for chain.kind %q", c.Chain.Pin, c.Chain.Kind)
	}

	if len(c.Endpoints) == 0 {
		bad("endpoints", "at least one [[endpoints]] entry is required")
	}
	seen := map[string]bool{}
	for i, e := range c.Endpoints {
		key := fmt.Sprintf("endpoints[%d]", i)
		if e.Name == "" {
			bad(key+".name", "required")
		} else if seen[e.Name] {
			bad(key+".name", "duplicate endpoint name %q", e.Name)
		} else if strings.ContainsAny(e.Name, "/ \t") {
			bad(key+".name", "%q must not contain '/' or spaces", e.Name)
		}
		seen[e.Name] = true
		if err := validateEndpointURL(e.URL); err != nil {
			bad(key+".url", "%v", err)
		}
	}

	h := c.Hedge
	if _, err := ParseDelay(h.Delay); err != nil {
		bad("hedge.delay", "%v", err)
	}
	if h.Quantile <= 0 || h.Quantile >= 1 {
		bad("hedge.quantile", "must be between 0 and 1, got %v", h.Quantile)
	}
	if h.MaxExtra < 0 || h.MaxExtra > 8 {
		bad("hedge.max_extra", "must be between 0 and 8, got %d", h.MaxExtra)
	}
	if h.Budget < 0 || h.Budget > 1 {
		bad("hedge.budget", "must be between 0 and 1, got %v", h.Budget)
	}
	if h.BudgetBurst < 1 {
		bad("hedge.budget_burst", "must be at least 1")
	}
	positive("hedge.min_delay", h.MinDelay)
	positive("hedge.max_delay", h.MaxDelay)
	positive("hedge.cold_delay", h.ColdDelay)
	if h.MinDelay > h.MaxDelay {
		bad("hedge.min_delay", "%s is above hedge.max_delay %s", h.MinDelay, h.MaxDelay)
	}
	if h.MinSamples < 1 {
		bad("hedge.min_samples", "must be at least 1")
	}
	if h.MaxOutstanding < 1 {
		bad("hedge.max_outstanding", "must be at least 1")
	}
	if h.MaxInflight < 1 {
		bad("hedge.max_inflight", "must be at least 1")
	}
	if h.PauseErrorRate <= 0 || h.PauseErrorRate > 1 {
		bad("hedge.pause_error_rate", "must be in (0, 1], got %v", h.PauseErrorRate)
	}
	for m, mc := range h.Methods {
		if _, err := ParseDelay(mc.Delay); mc.Delay != "" && err != nil {
			bad("hedge.methods."+m+".delay", "%v", err)
		}
		if mc.Quantile != 0 && (mc.Quantile <= 0 || mc.Quantile >= 1) {
			bad("hedge.methods."+m+".quantile", "must be between 0 and 1")
		}
	}

	b := c.Breaker
	if b.Failures < 1 {
		bad("breaker.failures", "must be at least 1")
	}
	if b.Successes < 1 {
		bad("breaker.successes", "must be at least 1")
	}
	if b.HalfOpenTrials < 1 {
		bad("breaker.half_open_trials", "must be at least 1")
	}
	positive("breaker.cooldown", b.Cooldown)
	positive("breaker.attempt_timeout_min", b.AttemptTimeoutMin)
	positive("breaker.backoff_base", b.BackoffBase)
	if b.MaxCooldown < b.Cooldown {
		bad("breaker.max_cooldown", "%s is below breaker.cooldown %s", b.MaxCooldown, b.Cooldown)
	}
	if b.BackoffMax < b.BackoffBase {
		bad("breaker.backoff_max", "%s is below breaker.backoff_base %s", b.BackoffMax, b.BackoffBase)
	}
	if b.AttemptTimeoutQuantile <= 0 || b.AttemptTimeoutQuantile >= 1 {
		bad("breaker.attempt_timeout_quantile", "must be between 0 and 1")
	}
	if b.AttemptTimeoutFactor < 1 {
		bad("breaker.attempt_timeout_factor", "must be at least 1")
	}
	if !(b.MaxOpenShare > 0 && b.MaxOpenShare <= 1) {
		bad("breaker.max_open_share", "must be in (0, 1], got %v", b.MaxOpenShare)
	}

	if c.Router.Tolerance < 0 {
		bad("router.tolerance", "must not be negative")
	}
	positive("router.explore_after", c.Router.ExploreAfter)
	if c.Router.ErrorPenalty < 0 {
		bad("router.error_penalty", "must not be negative")
	}
	if !(c.Router.PanicThreshold >= 0 && c.Router.PanicThreshold <= 1) {
		bad("router.panic_threshold", "must be in [0, 1], got %v", c.Router.PanicThreshold)
	}

	p := c.Probes
	positive("probes.interval", p.Interval)
	positive("probes.timeout", p.Timeout)
	positive("probes.independence_interval", p.IndependenceInterval)
	if p.Recover < 1 {
		bad("probes.recover", "must be at least 1")
	}
	switch p.ASNMode() {
	case "off", "cymru":
	case "db":
		if p.ASNDB == "" {
			bad("probes.asn_db", "required when probes.asn = \"db\"")
		}
	default:
		bad("probes.asn", "must be \"cymru\", \"db\" or \"off\", got %q", p.ASN)
	}
	for m, w := range c.Methods.Weights {
		if w <= 0 {
			bad("methods.weights."+m, "must be positive, got %v", w)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid config:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// ParseDelay parses a hedge delay: "auto" gives 0 and no error.
func ParseDelay(s string) (time.Duration, error) {
	if s == "auto" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("must be \"auto\" or a duration such as \"120ms\", got %q", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive, got %q", s)
	}
	return d, nil
}

func validateEndpointURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %s", RedactURL(raw))
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return fmt.Errorf("no host in %s", RedactURL(raw))
		}
	case "sim":
		// sim://NAME is started in-process by main.go and rewritten to
		// http before the engine sees it.
		return fmt.Errorf("sim:// URLs must be started by the command line before the engine starts: %s", RedactURL(raw))
	default:
		return fmt.Errorf("scheme must be http or https: %s", RedactURL(raw))
	}
	return nil
}

// IsLoopbackAddr says whether host:port listens on loopback only.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
