package engine

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// Validate reports every invalid value of the configuration at once, each
// on its own line naming its config key ("hedge.quantile: must be …"),
// section by section.
func (c Config) Validate() error {
	p := c.Problems()
	if len(p) == 0 {
		return nil
	}
	lines := make([]string, len(p))
	for i, x := range p {
		lines[i] = x.String()
	}
	return fmt.Errorf("invalid config:\n  %s", strings.Join(lines, "\n  "))
}

// ConfigProblem is one invalid value: the config key it names and why
// ("must be …"). Main merges the engine's with its decoder's, and says
// which came from the environment, by Key.
type ConfigProblem struct {
	Key string // "" for a problem of no one key
	Why string
}

// String is the problem as a line of the error: "key: why".
func (p ConfigProblem) String() string {
	if p.Key == "" {
		return p.Why
	}
	return p.Key + ": " + p.Why
}

// Problems are Validate's findings, section by section.
func (c Config) Problems() []ConfigProblem {
	var p problems
	c.Server.validate(&p)
	c.Chain.validate(&p)
	validateEndpoints(c.Endpoints, &p)
	table := jsonrpc.NewMethodTable(c.Chain.Kind, jsonrpc.MethodLists(c.Methods))
	c.Hedge.validate(&p, c.Server.RequestTimeout, table)
	c.Hedge.validateMethods(&p, table)
	c.Breaker.validate(&p, c.Server.RequestTimeout)
	c.Router.validate(&p)
	c.Probes.validate(&p)
	c.Demo.validate(&p, c.Chain.Kind, c.Methods)
	c.UI.validate(&p)
	c.Methods.validate(&p, c.Chain.Kind)
	return p
}

// problems are the invalid values found so far.
type problems []ConfigProblem

func (p *problems) add(key, format string, args ...any) {
	*p = append(*p, ConfigProblem{Key: key, Why: fmt.Sprintf(format, args...)})
}

func (p *problems) positive(key string, d time.Duration) {
	if d <= 0 {
		p.add(key, "must be a positive duration, got %s", d)
	}
}

// durationIn checks lo <= d <= hi for a key where a value out of that
// range is not a choice but a mistake: a probe loop at "1ns" runs back to
// back against the user's provider, a cooldown near the top of the range
// overflows when doubled. why says what the floor protects.
func (p *problems) durationIn(key string, d, lo, hi time.Duration, why string) {
	if d < lo || d > hi {
		p.add(key, "must be a duration from %s to %s (%s), got %s", shortDuration(lo), shortDuration(hi), why, d)
	}
}

func (p *problems) atLeastOne(key string, n int) {
	if n < 1 {
		p.add(key, "must be at least 1, got %d", n)
	}
}

// inRange checks lo <= x <= hi (open at an end marked so); NaN and the
// infinities TOML allows are never in range.
func (p *problems) inRange(key string, x, lo, hi float64, loOpen, hiOpen bool) {
	ok := !math.IsNaN(x) && !math.IsInf(x, 0) &&
		(x > lo || !loOpen && x == lo) && (x < hi || !hiOpen && x == hi)
	if ok {
		return
	}
	l, h := "[", "]"
	if loOpen {
		l = "("
	}
	if hiOpen {
		h = ")"
	}
	hs := strconv.FormatFloat(hi, 'g', -1, 64)
	if math.IsInf(hi, 1) {
		hs = "∞"
	}
	p.add(key, "must be in %s%s, %s%s, got %v", l, strconv.FormatFloat(lo, 'g', -1, 64), hs, h, x)
}

// The range of server.read_timeout and server.write_timeout: "1ns" left
// rpcdash listening and dropping every request on both ports, a write
// carried out upstream and its answer lost.
const (
	minClientTimeout = 10 * time.Millisecond
	maxClientTimeout = 24 * time.Hour
)

// The ceilings of server.max_body_bytes, server.max_held_body_bytes (and
// server.max_held_answer_bytes) and server.max_response_bytes.
const (
	maxBodyBytesCeiling     = 1 << 30
	maxHeldBodyBytesCeiling = 1 << 40
	maxResponseBytesCeiling = 4 << 30
)

// maxWriteAffinity is router.write_affinity's ceiling.
const maxWriteAffinity = 24 * time.Hour

func (s ServerConfig) validate(p *problems) {
	badAddr := map[string]bool{}
	for _, a := range []struct{ key, addr string }{{"server.listen", s.Listen}, {"server.admin", s.Admin}} {
		_, port, err := net.SplitHostPort(a.addr)
		switch {
		case err != nil:
			p.add(a.key, "not a host:port address: %s", ShowConfigValue(a.addr))
		case !listenPort(port):
			p.add(a.key, "the port of %s is not a number from 0 to 65535 (nor a service name such as http)", ShowConfigValue(a.addr))
		default:
			continue
		}
		badAddr[a.key] = true
	}
	if !badAddr["server.listen"] && !badAddr["server.admin"] && sameListenAddr(s.Listen, s.Admin) {
		// Else the admin port's bind failed "address already in use", which
		// sent the operator looking for another process holding it.
		p.add("server.admin", "%s is server.listen's address too: the admin API needs a port of its own", ShowConfigValue(s.Admin))
	}
	// Go's HTTP server trims a header value's ends, so a token that has
	// whitespace there never matches, and it refuses a header holding a
	// control character: either way the admin API would refuse every call.
	switch tok := s.AdminToken; {
	case tok != "" && strings.TrimSpace(tok) == "":
		p.add("server.admin_token", "is only whitespace: no request could carry it")
	case tok != strings.TrimSpace(tok):
		p.add("server.admin_token", "starts or ends with whitespace, which no request could carry")
	case !httpguts.ValidHeaderFieldValue(tok):
		p.add("server.admin_token", "holds a control character, which no request could carry")
	case !badAddr["server.admin"] && !isLoopbackAddr(s.Admin) && tok == "":
		p.add("server.admin_token", "required: server.admin %s is not a loopback address", ShowConfigValue(s.Admin))
	}
	p.positive("server.request_timeout", s.RequestTimeout)
	p.positive("server.shutdown_timeout", s.ShutdownTimeout)
	p.positive("server.stats_window", s.StatsWindow)
	// The ceilings: at the top of int64 the bound's own arithmetic wrapped,
	// and rpcdash refused every request ("could not read request body") or
	// every answer ("exceeds server.max_response_bytes").
	switch {
	case s.MaxBodyBytes <= 0:
		p.add("server.max_body_bytes", "must be positive, got %d", s.MaxBodyBytes)
	case s.MaxBodyBytes > maxBodyBytesCeiling:
		p.add("server.max_body_bytes", "must be at most %d (1 GiB: a request is read whole before it is sent), got %d", maxBodyBytesCeiling, s.MaxBodyBytes)
	}
	switch {
	case s.MaxHeldAnswerBytes <= 0:
		p.add("server.max_held_answer_bytes", "must be positive, got %d", s.MaxHeldAnswerBytes)
	case s.MaxHeldAnswerBytes > maxHeldBodyBytesCeiling:
		p.add("server.max_held_answer_bytes", "must be at most %d (1 TiB), got %d", int64(maxHeldBodyBytesCeiling), s.MaxHeldAnswerBytes)
	}
	switch {
	case s.MaxHeldBodyBytes <= 0:
		p.add("server.max_held_body_bytes", "must be positive, got %d", s.MaxHeldBodyBytes)
	case s.MaxHeldBodyBytes > maxHeldBodyBytesCeiling:
		p.add("server.max_held_body_bytes", "must be at most %d (1 TiB), got %d", int64(maxHeldBodyBytesCeiling), s.MaxHeldBodyBytes)
	}
	if s.MaxBatch <= 0 {
		p.add("server.max_batch", "must be positive, got %d", s.MaxBatch)
	}
	p.durationIn("server.read_timeout", s.ReadTimeout, minClientTimeout, maxClientTimeout, "below it no client's request is read in time: every one is dropped")
	p.durationIn("server.write_timeout", s.WriteTimeout, minClientTimeout, maxClientTimeout, "below it no answer is handed over: every request is carried out and its answer dropped")
	p.positive("server.idle_timeout", s.IdleTimeout)
	if s.MaxConns <= 0 {
		p.add("server.max_conns", "must be positive, got %d", s.MaxConns)
	}
	if s.MaxInflight <= 0 {
		p.add("server.max_inflight", "must be positive, got %d", s.MaxInflight)
	}
	switch {
	case s.MaxResponseBytes < 1024:
		p.add("server.max_response_bytes", "must be at least 1024, got %d", s.MaxResponseBytes)
	case s.MaxResponseBytes > maxResponseBytesCeiling:
		p.add("server.max_response_bytes", "must be at most %d (4 GiB: an answer is held whole before it is relayed), got %d", maxResponseBytesCeiling, s.MaxResponseBytes)
	}
	if s.TraceRequests < 0 || s.TraceRequests > maxTraceRequests {
		p.add("server.trace_requests", "must be between 0 (off) and %d, got %d", maxTraceRequests, s.TraceRequests)
	}
	if !badAddr["server.listen"] && !isLoopbackAddr(s.Listen) && !s.AllowRemote {
		p.add("server.allow_remote", "server.listen %s is not a loopback address: anyone who reaches it spends your endpoints' quota; set server.allow_remote = true to serve other machines", ShowConfigValue(s.Listen))
	}
	// nil is the default; an empty list given would answer no host name,
	// only IP addresses, which is more likely a mistake than meant.
	if s.VHosts != nil && len(s.VHosts) == 0 {
		p.add("server.vhosts", "is an empty list, which would answer no host name (only IP addresses): leave it out for the default (localhost, 127.0.0.1, ::1 and the hosts of server.listen and server.admin), or list the names, or \"*\" for any")
	}
	for i, h := range s.VHosts {
		if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, " /\t") {
			p.add(fmt.Sprintf("server.vhosts[%d]", i), "%s is not a host name (or \"*\")", ShowConfigValue(h))
		}
	}
	for i, o := range s.CORSOrigins {
		if err := validateOrigin(o); err != nil {
			p.add(fmt.Sprintf("server.cors_origins[%d]", i), "%v", err)
		}
	}
}

func (c ChainConfig) validate(p *problems) {
	switch c.Kind {
	case "evm", "solana":
	default:
		p.add("chain.kind", "must be \"evm\" or \"solana\", got %s", ShowConfigValue(c.Kind))
	}
	if c.ChainID != 0 && c.Kind != "evm" {
		p.add("chain.chain_id", "applies to chain.kind \"evm\"; use chain.genesis_hash for solana")
	}
	if c.GenesisHash != "" && c.Kind != "solana" {
		p.add("chain.genesis_hash", "applies to chain.kind \"solana\"; use chain.chain_id for evm")
	}
	// The ceiling: heads are compared against head + lag, which wrapped
	// near the top of int64 and put every endpoint "ahead".
	if c.MaxHeadLag < 0 || c.MaxHeadLag > maxHeadLagCeiling {
		p.add("chain.max_head_lag", "must be from 0 to %d, got %d", maxHeadLagCeiling, c.MaxHeadLag)
	}
	c.validatePin(p)
}

// maxHeadLagCeiling is far beyond any lag worth keeping an endpoint for
// (about 30 years of Ethereum blocks, 12 of Solana slots).
const maxHeadLagCeiling = 1_000_000_000

// validatePin judges chain.pin by the levels of chain.kind; under an
// unknown kind (reported as such), by those of every kind.
func (c ChainConfig) validatePin(p *problems) {
	levels, known := pinLevels[c.Kind]
	if !known {
		for _, kind := range slices.Sorted(maps.Keys(pinLevels)) {
			levels = append(levels, pinLevels[kind]...)
		}
		levels = slices.Compact(slices.Sorted(slices.Values(levels)))
	}
	if c.PinLevel() == "" || slices.Contains(levels, c.Pin) {
		return
	}
	quoted := make([]string, len(levels))
	for i, l := range levels {
		quoted[i] = strconv.Quote(l)
	}
	if !known {
		p.add("chain.pin", "%s is not a finality level of any chain.kind: it takes %s or %q (no pinning, the default)",
			ShowConfigValue(c.Pin), strings.Join(quoted, ", "), pinOff)
		return
	}
	p.add("chain.pin", "%s is not a finality level for chain.kind %s: it takes %s or %q (no pinning, the default)",
		ShowConfigValue(c.Pin), ShowConfigValue(c.Kind), strings.Join(quoted, ", "), pinOff)
}

func validateEndpoints(eps []EndpointConfig, p *problems) {
	if len(eps) == 0 {
		p.add("endpoints", "at least one [[endpoints]] entry is required")
	}
	seen := map[string]bool{}
	answerers := 0
	for i, e := range eps {
		key := fmt.Sprintf("endpoints[%d]", i)
		switch {
		case e.Name == "":
			p.add(key+".name", "required")
		case seen[e.Name]:
			p.add(key+".name", "duplicate endpoint name %s", ShowConfigValue(e.Name))
		case strings.ContainsAny(e.Name, "/ \t"):
			p.add(key+".name", "%s must not contain '/' or spaces", ShowConfigValue(e.Name))
		}
		seen[e.Name] = true
		// These are shown as they are, in the console, rpcdash status, logs
		// and metrics labels: an escape sequence in one acted on the terminal.
		for _, f := range [...]struct{ field, v string }{{"name", e.Name}, {"provider", e.Provider}, {"region", e.Region}} {
			if !printable(f.v) {
				p.add(key+"."+f.field, "%s holds a control or non-printable character", ShowConfigValue(f.v))
			}
		}
		if err := validateEndpointURL(e.URL); err != nil {
			p.add(key+".url", "%v", err)
		}
		if err := validateProxy(e.Proxy); err != nil {
			p.add(key+".proxy", "%v", err)
		}
		if err := checkRole(e.Role); e.Role != "" && err != nil {
			p.add(key+".role", "%v", err)
		} else if e.Share != nil {
			if err := checkShare(e.RoleName(), *e.Share); err != nil {
				p.add(key+".share", "%v", err)
			}
		}
		if canAnswer(e.RoleName(), false, false) {
			answerers++
		}
	}
	if len(eps) > 0 && answerers == 0 {
		p.add("endpoints", "every endpoint has role = %q: nothing could answer a client (a shadow only receives mirrored reads); make at least one %q, %q or %q",
			RoleShadow, RolePrimary, RoleStandby, RoleCanary)
	}
}

// checkShare says what is wrong with share for role, if anything.
func checkShare(role string, share float64) error {
	if !TakesShare(role) {
		return fmt.Errorf("only a %q or %q endpoint takes a share, this one is %q", RoleCanary, RoleShadow, role)
	}
	if !(share > 0 && share <= 1) {
		return fmt.Errorf("must be in (0, 1], got %v", share)
	}
	return nil
}

func (h HedgeConfig) validate(p *problems, requestTimeout time.Duration, table *jsonrpc.MethodTable) {
	if d, err := ParseDelay(h.Delay); err != nil {
		p.add("hedge.delay", "%v", err)
	} else if err := checkFixedDelay(d, requestTimeout); err != nil {
		p.add("hedge.delay", "%v", err)
	}
	p.inRange("hedge.quantile", h.Quantile, 0, 1, true, true)
	if h.MaxExtra < 0 || h.MaxExtra > 8 {
		p.add("hedge.max_extra", "must be between 0 and 8, got %d", h.MaxExtra)
	}
	p.inRange("hedge.budget", h.Budget, 0, 1, false, false)
	p.inRange("hedge.budget_burst", h.BudgetBurst, 1, math.Inf(1), false, true)
	p.positive("hedge.min_delay", h.MinDelay)
	p.positive("hedge.max_delay", h.MaxDelay)
	p.positive("hedge.cold_delay", h.ColdDelay)
	if h.MinDelay > h.MaxDelay {
		p.add("hedge.min_delay", "%s is above hedge.max_delay %s", h.MinDelay, h.MaxDelay)
	}
	p.atLeastOne("hedge.min_samples", h.MinSamples)
	p.atLeastOne("hedge.max_outstanding", h.MaxOutstanding)
	p.atLeastOne("hedge.max_inflight", h.MaxInflight)
	p.inRange("hedge.pause_error_rate", h.PauseErrorRate, 0, 1, true, false)
	if r := h.PauseLatencyRatio; r != 0 && !(r >= 1.5 && r <= 100) {
		p.add("hedge.pause_latency_ratio", "must be 0 (off) or in [1.5, 100], got %v", r)
	}
	for _, m := range slices.Sorted(maps.Keys(h.Methods)) {
		mc := h.Methods[m]
		if mc.Delay != "" {
			d, err := ParseDelay(mc.Delay)
			if err == nil {
				limit, _ := methodRequestTimeout(table, m, requestTimeout)
				err = checkMethodDelay(d, m, limit, requestTimeout)
			}
			if err != nil {
				p.add("hedge.methods."+m+".delay", "%v", err)
			}
		}
		if mc.Quantile != 0 {
			p.inRange("hedge.methods."+m+".quantile", mc.Quantile, 0, 1, true, true)
		}
	}
}

// validateMethods refuses settings for a method that is never hedged:
// they would be kept and never used.
func (h HedgeConfig) validateMethods(p *problems, table *jsonrpc.MethodTable) {
	for _, m := range slices.Sorted(maps.Keys(h.Methods)) {
		if why := table.WhyNotHedged(m); why != "" {
			p.add("hedge.methods."+m, "%s %s: never hedged", m, why)
		}
	}
}

func (b BreakerConfig) validate(p *problems, requestTimeout time.Duration) {
	p.atLeastOne("breaker.failures", b.Failures)
	p.atLeastOne("breaker.successes", b.Successes)
	p.atLeastOne("breaker.half_open_trials", b.HalfOpenTrials)
	p.durationIn("breaker.cooldown", b.Cooldown, minCooldown, maxBreakerWait, "a failed trial doubles it")
	p.durationIn("breaker.max_cooldown", b.MaxCooldown, minCooldown, maxBreakerWait, "a failed trial doubles the cooldown up to it")
	p.positive("breaker.attempt_timeout_min", b.AttemptTimeoutMin)
	if b.AttemptTimeoutMin > requestTimeout {
		p.add("breaker.attempt_timeout_min", "%s is above server.request_timeout (%s): no attempt may last that long", b.AttemptTimeoutMin, requestTimeout)
	}
	p.durationIn("breaker.backoff_base", b.BackoffBase, minBackoff, maxBreakerWait, "below it a 429 backs nothing off")
	p.durationIn("breaker.backoff_max", b.BackoffMax, minBackoff, maxBreakerWait, "a Retry-After is honoured up to it")
	if b.MaxCooldown < b.Cooldown && b.MaxCooldown >= minCooldown {
		p.add("breaker.max_cooldown", "%s is below breaker.cooldown %s", b.MaxCooldown, b.Cooldown)
	}
	if b.BackoffMax < b.BackoffBase && b.BackoffMax >= minBackoff {
		p.add("breaker.backoff_max", "%s is below breaker.backoff_base %s", b.BackoffMax, b.BackoffBase)
	}
	p.inRange("breaker.attempt_timeout_quantile", b.AttemptTimeoutQuantile, 0, 1, true, true)
	p.inRange("breaker.attempt_timeout_factor", b.AttemptTimeoutFactor, 1, math.Inf(1), false, true)
	p.inRange("breaker.max_open_share", b.MaxOpenShare, 0, 1, true, false)
}

func (r RouterConfig) validate(p *problems) {
	p.inRange("router.tolerance", r.Tolerance, 0, math.Inf(1), false, true)
	p.positive("router.explore_after", r.ExploreAfter)
	p.inRange("router.error_penalty", r.ErrorPenalty, 0, math.Inf(1), false, true)
	p.inRange("router.tail_penalty", r.TailPenalty, 0, math.Inf(1), false, true)
	if r.LagPenalty < 0 {
		p.add("router.lag_penalty", "must not be negative (0 ignores head lag in the cost), got %s", r.LagPenalty)
	}
	p.inRange("router.panic_threshold", r.PanicThreshold, 0, 1, false, false)
	p.inRange("router.promote_match_rate", r.PromoteMatchRate, 0, 1, false, false)
	switch {
	case r.WriteAffinity < 0:
		p.add("router.write_affinity", "must not be negative (0s turns write affinity off), got %s", r.WriteAffinity)
	case r.WriteAffinity > maxWriteAffinity:
		// Past about 240 years a hold's end, in Unix nanoseconds, wrapped
		// into the past: write affinity silently off.
		p.add("router.write_affinity", "must be at most %s (0s turns write affinity off), got %s", shortDuration(maxWriteAffinity), r.WriteAffinity)
	}
}

// The ranges of the probe and breaker durations. The floors are where a
// value stops being a setting and becomes a loop: probes are sent one
// after another, so probes.interval "1ns" probes every endpoint back to
// back (the test rigs probe local sims every 10-20 ms); the ceilings keep
// the doubling and the multiples of these durations far from overflow.
const (
	minProbeInterval        = 10 * time.Millisecond
	maxProbeInterval        = 24 * time.Hour
	minProbeTimeout         = 10 * time.Millisecond
	maxProbeTimeout         = time.Hour
	minIndependenceInterval = time.Second
	maxIndependenceInterval = 7 * 24 * time.Hour
	minCooldown             = 10 * time.Millisecond
	minBackoff              = 10 * time.Millisecond
	maxBreakerWait          = 24 * time.Hour
)

func (c ProbesConfig) validate(p *problems) {
	p.durationIn("probes.interval", c.Interval, minProbeInterval, maxProbeInterval, "probes run back to back: below it they hammer every endpoint")
	p.durationIn("probes.timeout", c.Timeout, minProbeTimeout, maxProbeTimeout, "no network answers sooner")
	p.durationIn("probes.independence_interval", c.IndependenceInterval, minIndependenceInterval, maxIndependenceInterval,
		"each check resolves every endpoint's IPs, TLS issuer and ASN again")
	p.atLeastOne("probes.recover", c.Recover)
	p.atLeastOne("probes.identity_every", c.IdentityEvery)
	switch c.ASNMode() {
	case "off", "cymru":
	case "db":
		if c.ASNDB == "" {
			p.add("probes.asn_db", "required when probes.asn = \"db\"")
		}
	default:
		p.add("probes.asn", "must be \"cymru\", \"db\" or \"off\", got %s", ShowConfigValue(c.ASN))
	}
}

func (d DemoConfig) validate(p *problems, kind string, methods MethodsConfig) {
	p.inRange("demo.rate", d.Rate, 0, maxDemoRate, true, false)
	if !d.Enabled {
		return // the mix is read only when the demo starts
	}
	_, err := parseDemoMix(d.Mix, kind, jsonrpc.NewMethodTable(kind, jsonrpc.MethodLists(methods)))
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() { // each bad item on its own line
			p.add("demo.mix", "%v", e)
		}
	} else if err != nil {
		p.add("demo.mix", "%v", err)
	}
}

func (u UIConfig) validate(p *problems) {
	if strings.TrimSpace(u.Theme) == "" {
		p.add("ui.theme", "must name a theme (\"dark\", \"light\", \"contrast\") or a .toml file")
	}
	if u.Refresh < 50*time.Millisecond || u.Refresh > 10*time.Second {
		p.add("ui.refresh", "must be between 50ms and 10s, got %s", u.Refresh)
	}
}

func (m MethodsConfig) validate(p *problems, kind string) {
	for _, l := range []struct {
		key     string
		methods []string
		class   jsonrpc.Class
	}{{"methods.reads", m.Reads, jsonrpc.ClassRead}, {"methods.stateful", m.Stateful, jsonrpc.ClassStateful}, {"methods.writes", m.Writes, jsonrpc.ClassWrite}} {
		for _, method := range l.methods {
			if why := jsonrpc.ConfigClassProblem(kind, method, l.class); why != "" {
				p.add(l.key, "%s", why)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Weights)) {
		p.inRange("methods.weights."+name, m.Weights[name], 0, math.Inf(1), true, true)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Timeouts)) {
		p.positive("methods.timeouts."+name, m.Timeouts[name])
	}
}

// validateProxy checks an [[endpoints]] proxy: "", "env", or a proxy URL.
// A bad one is never shown: a proxy URL may carry a password.
func validateProxy(raw string) error {
	if raw == "" || raw == ProxyFromEnv {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("must be %q or a proxy URL such as http://proxy:3128", ProxyFromEnv)
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
		return urlPort(u)
	}
	return fmt.Errorf("scheme %q is not http, https, socks5 or socks5h", u.Scheme)
}

// urlPort checks a URL's port, if it names one: a port outside 1-65535
// parses, and fails only at the first connection.
func urlPort(u *url.URL) error {
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %s is outside 1-65535", port)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return errors.New("has an empty port")
	}
	return nil
}

// validateEndpointURL checks an [[endpoints]] url. Its errors never show
// the URL, whole or redacted (README): a malformed one may hold its key
// where a redaction would take it for the host. The scheme and port the
// parser found are shown, as what was wrong.
func validateEndpointURL(raw string) error {
	if raw == "" {
		return errors.New("required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL such as https://host:port/path") // url.Parse's error quotes the URL
	}
	switch u.Scheme {
	case "http", "https":
		if u.Hostname() == "" {
			return errors.New("has no host")
		}
		if err := urlPort(u); err != nil {
			return err
		}
	case "sim":
		// sim://NAME is started in-process by main.go and rewritten to
		// http before the engine sees it.
		return errors.New("sim:// URLs must be started by the command line before the engine starts")
	case "":
		return errors.New("has no scheme: write http:// or https:// before the host")
	default:
		return fmt.Errorf("scheme %q is not http or https", u.Scheme)
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
		return fmt.Errorf("%s is not an origin such as \"http://localhost:3000\" (or \"*\")", ShowConfigValue(o))
	}
	return nil
}

// listenPort says whether a listener can bind port: a number in 0-65535
// or a service name, as net.Listen reads it (which fails only at bind).
func listenPort(port string) bool {
	_, err := net.LookupPort("tcp", port)
	return err == nil
}

// isLoopbackAddr says whether host:port listens on loopback only.
func isLoopbackAddr(addr string) bool {
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

// ScrubConfigError removes endpoint URL secrets from a config error message
// (decoders quote the offending value).
func ScrubConfigError(msg string, urls []string) string {
	return redact.NewScrubber(urls).Scrub(msg)
}

// ShowConfigValue is a config value as an error message may show it:
// quoted, cut and stripped of what a terminal would act on; one that holds
// a URL is shown as endpoint URLs are (scheme, host and port), since a
// misplaced endpoint URL carries its secret wherever it lands.
func ShowConfigValue(s string) string {
	if strings.Contains(s, "://") || strings.Contains(s, "@") {
		return strconv.Quote(redact.URL(s))
	}
	return strconv.Quote(redact.Sanitize(s, 80))
}

// printable says whether s is valid UTF-8 of printable characters and
// spaces only.
func printable(s string) bool { return redact.Sanitize(s, len(s)) == s }

// sameListenAddr says whether two valid host:port addresses name one fixed
// port on one host (port 0, a port the system picks, never clashes).
func sameListenAddr(a, b string) bool {
	ah, ap, _ := net.SplitHostPort(a)
	bh, bp, _ := net.SplitHostPort(b)
	return ap == bp && ap != "0" && ap != "" && strings.EqualFold(ah, bh)
}
