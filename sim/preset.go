package sim

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// presets are the personalities of the shipped config and `rpcdash sim`.
var presets = map[string]Config{
	"steady":     {Latency: Latency{Median: 40 * time.Millisecond, Sigma: 0.2}},
	"heavy-tail": {Latency: Latency{Median: 50 * time.Millisecond, Sigma: 0.3, TailProb: 0.05, TailMin: 400 * time.Millisecond, TailMax: 1200 * time.Millisecond}},
	"flaky":      {Latency: Latency{Median: 60 * time.Millisecond, Sigma: 0.4}, ErrorRate: 0.05, RateLimitRate: 0.02, RetryAfter: time.Second},
	"fast":       {},
	"slow":       {Latency: Latency{Median: 250 * time.Millisecond, Sigma: 0.3}},
	"laggy":      {Latency: Latency{Median: 40 * time.Millisecond, Sigma: 0.2}, HeadLag: 10},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Preset returns the named personality with Name set to name.
func Preset(name string) (Config, error) {
	c, ok := presets[name]
	if !ok {
		return Config{}, fmt.Errorf("sim: unknown preset %q (have %s)", name, strings.Join(PresetNames(), ", "))
	}
	c.Name = name
	return c, nil
}

// ParseURL turns a sim:// endpoint URL into a Config:
//
//	sim://<preset>?name=&chain=&chain_id=&head_lag=&seed=&block_time=&median=&sigma=&tail=&tail_min=&tail_max=&error_rate=&rate_limit_rate=&retry_after=
//	              &rate_limit_methods=<method>,<method>…
//	              &capacity=&correlated=&incident=&incident_seed=
//
// ("latency" and "lag" are accepted for median and head_lag, "tail_prob"
// for tail.)
//
// Every query parameter is optional and overrides the preset; unknown
// parameters are an error.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("sim: bad url: %w", err)
	}
	if u.Scheme != "sim" {
		return Config{}, fmt.Errorf("sim: url scheme %q is not sim", u.Scheme)
	}
	c, err := Preset(u.Host)
	if err != nil {
		return Config{}, err
	}
	for key, vals := range u.Query() {
		if err := setURLParam(&c, key, vals[len(vals)-1]); err != nil {
			return Config{}, fmt.Errorf("sim: url parameter %s: %w", key, err)
		}
	}
	return c, c.Validate()
}

func setURLParam(c *Config, key, v string) error {
	var err error
	switch key {
	case "name":
		c.Name = v
	case "chain":
		c.Chain = v
	case "chain_id":
		c.ChainID, err = strconv.ParseUint(v, 10, 64)
	case "head_lag", "lag":
		c.HeadLag, err = strconv.ParseInt(v, 10, 64)
	case "seed":
		c.Seed, err = strconv.ParseInt(v, 10, 64)
	case "block_time":
		c.BlockTime, err = time.ParseDuration(v)
	case "median", "latency":
		c.Latency.Median, err = time.ParseDuration(v)
	case "sigma":
		c.Latency.Sigma, err = strconv.ParseFloat(v, 64)
	case "tail", "tail_prob":
		c.Latency.TailProb, err = strconv.ParseFloat(v, 64)
	case "tail_min":
		c.Latency.TailMin, err = time.ParseDuration(v)
	case "tail_max":
		c.Latency.TailMax, err = time.ParseDuration(v)
	case "error_rate":
		c.ErrorRate, err = strconv.ParseFloat(v, 64)
	case "rate_limit_rate":
		c.RateLimitRate, err = strconv.ParseFloat(v, 64)
	case "retry_after":
		c.RetryAfter, err = time.ParseDuration(v)
	case "rate_limit_methods":
		c.RateLimitMethods = strings.Split(v, ",")
	case "capacity":
		c.Capacity, err = strconv.ParseFloat(v, 64)
	case "correlated":
		c.Latency.Correlated, err = strconv.ParseFloat(v, 64)
	case "incident":
		c.Latency.Incident, err = time.ParseDuration(v)
	case "incident_seed":
		c.IncidentSeed, err = strconv.ParseInt(v, 10, 64)
	default:
		return fmt.Errorf("unknown parameter")
	}
	return err
}
