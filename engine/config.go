package engine

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
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
	Demo      DemoConfig       `mapstructure:"demo"`
	UI        UIConfig         `mapstructure:"ui"`

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
	// VHosts are the Host names both ports answer (empty: DefaultVHosts);
	// CORSOrigins the browser origins they accept ("*" for any).
	VHosts      []string `mapstructure:"vhosts"`
	CORSOrigins []string `mapstructure:"cors_origins"`
	// AllowRemote must be set for server.listen to be a non-loopback
	// address: an open RPC port spends the endpoints' quota for anyone.
	AllowRemote bool `mapstructure:"allow_remote"`
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
	// PublicURL marks a URL that carries no credential: its path and
	// query are shown. Otherwise only scheme, host and port are.
	PublicURL bool `mapstructure:"public_url"`
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
	def(&s.ReadTimeout, 10*time.Second)
	def(&s.WriteTimeout, 30*time.Second)
	def(&s.IdleTimeout, 2*time.Minute)
	def(&s.MaxConns, 4096)
	def(&s.MaxInflight, 4096)
	def(&s.MaxResponseBytes, 32<<20)

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
	def(&h.MaxOutstanding, 500)
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

	def(&c.Demo.Rate, 20)
	def(&c.UI.Theme, "dark")
	def(&c.UI.Refresh, 250*time.Millisecond)

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
	positive("server.read_timeout", c.Server.ReadTimeout)
	positive("server.write_timeout", c.Server.WriteTimeout)
	positive("server.idle_timeout", c.Server.IdleTimeout)
	if c.Server.MaxConns <= 0 {
		bad("server.max_conns", "must be positive")
	}
	if c.Server.MaxInflight <= 0 {
		bad("server.max_inflight", "must be positive")
	}
	if c.Server.MaxResponseBytes < 1024 {
		bad("server.max_response_bytes", "must be at least 1024, got %d", c.Server.MaxResponseBytes)
	}
	if c.Server.Listen != "" && !IsLoopbackAddr(c.Server.Listen) && !c.Server.AllowRemote {
		bad("server.allow_remote", "server.listen %s is not a loopback address: anyone who reaches it spends your endpoints' quota; set server.allow_remote = true to serve other machines", c.Server.Listen)
	}
	for i, h := range c.Server.VHosts {
		if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, " /\t") {
			bad(fmt.Sprintf("server.vhosts[%d]", i), "%q is not a host name (or \"*\")", h)
		}
	}
	for i, o := range c.Server.CORSOrigins {
		if err := validateOrigin(o); err != nil {
			bad(fmt.Sprintf("server.cors_origins[%d]", i), "%v", err)
		}
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
	if c.Demo.Rate <= 0 || c.Demo.Rate > maxDemoRate {
		bad("demo.rate", "must be in (0, %d] requests per second, got %v", maxDemoRate, c.Demo.Rate)
	}
	if _, err := ParseDemoMix(c.Demo.Mix, c.Chain.Kind, NewMethodTable(c.Chain.Kind, c.Methods)); err != nil {
		bad("demo.mix", "%v", err)
	}
	if strings.TrimSpace(c.UI.Theme) == "" {
		bad("ui.theme", "must name a theme (\"dark\", \"light\", \"contrast\") or a .toml file")
	}
	if c.UI.Refresh < 50*time.Millisecond || c.UI.Refresh > 10*time.Second {
		bad("ui.refresh", "must be between 50ms and 10s, got %s", c.UI.Refresh)
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

// AutoDelay is what ParseDelay gives for "auto": the delay follows the
// method's latency quantile. Every other delay is fixed, zero included.
const AutoDelay time.Duration = -1

// ParseDelay parses a hedge delay: "auto" gives AutoDelay; a duration of
// zero is a real one (duplicate at once, as bench's immediate policy does).
func ParseDelay(s string) (time.Duration, error) {
	if s == "auto" {
		return AutoDelay, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("must be \"auto\" or a duration such as \"120ms\", got %q", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("must not be negative, got %q", s)
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
		if u.Hostname() == "" {
			return fmt.Errorf("no host in %s", RedactURL(raw))
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("port %s is outside 1-65535 in %s", p, RedactURL(raw))
			}
		} else if strings.HasSuffix(u.Host, ":") {
			return fmt.Errorf("empty port in %s", RedactURL(raw))
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

// validateOrigin accepts "*" or a browser origin: scheme://host[:port]
// (a page's, or an extension's such as chrome-extension://ID), where the
// host may start with one "*." wildcard label.
func validateOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(strings.Replace(o, "*.", "wildcard.", 1))
	if err != nil || u.Scheme == "" || u.Host == "" ||
		u.Path != "" || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("%q is not an origin such as \"http://localhost:3000\" (or \"*\")", o)
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
