package engine

import "time"

// Default is the configuration with every default in place, the values
// the README's configuration table lists: hedging and probes on, the
// demo load off, no endpoints. It is the one source of defaults: main
// decodes config.toml over it (a zero the file sets stays zero), and
// tests and bench start from it.
func Default() Config {
	return Config{
		Server: ServerConfig{
			Listen:             "127.0.0.1:8545",
			Admin:              "127.0.0.1:8546",
			RequestTimeout:     10 * time.Second,
			MaxBodyBytes:       5 << 20,
			MaxHeldBodyBytes:   256 << 20,
			MaxBatch:           1000,
			ShutdownTimeout:    10 * time.Second,
			StatsWindow:        5 * time.Minute,
			ReadTimeout:        10 * time.Second,
			WriteTimeout:       30 * time.Second,
			IdleTimeout:        2 * time.Minute,
			MaxConns:           4096,
			MaxInflight:        4096,
			MaxResponseBytes:   32 << 20,
			MaxHeldAnswerBytes: 256 << 20,
			TraceRequests:      1000,
		},
		Chain: ChainConfig{Kind: "evm", MaxHeadLag: 5},
		Hedge: HedgeConfig{
			Enabled:           true,
			Delay:             "auto",
			Quantile:          0.95,
			MaxExtra:          1,
			SameDomain:        true,
			Budget:            0.10,
			BudgetBurst:       10,
			MinDelay:          5 * time.Millisecond,
			MaxDelay:          2 * time.Second,
			ColdDelay:         250 * time.Millisecond,
			MinSamples:        20,
			MaxOutstanding:    500,
			MaxInflight:       500,
			PauseErrorRate:    0.2,
			PauseLatencyRatio: 3,
		},
		Breaker: BreakerConfig{
			Failures:               3,
			Cooldown:               10 * time.Second,
			MaxCooldown:            5 * time.Minute,
			Successes:              3,
			HalfOpenTrials:         1,
			AttemptTimeoutMin:      250 * time.Millisecond,
			AttemptTimeoutQuantile: 0.99,
			AttemptTimeoutFactor:   3,
			BackoffBase:            time.Second,
			BackoffMax:             time.Minute,
			MaxOpenShare:           0.5,
		},
		Router: RouterConfig{
			Tolerance:      0.25,
			ErrorPenalty:   10,
			TailPenalty:    100,
			LagPenalty:     50 * time.Millisecond,
			ExploreAfter:   5 * time.Second,
			PanicThreshold: 0.5,
			WriteAffinity:  30 * time.Second,
			// Any mismatch is to be investigated before going on (the
			// cutover's compare step; the console marks below 100 %).
			PromoteMatchRate: 1,
		},
		Probes: ProbesConfig{
			Enabled:              true,
			Interval:             5 * time.Second,
			Timeout:              2 * time.Second,
			Recover:              3,
			IdentityEvery:        1,
			IndependenceInterval: 10 * time.Minute,
		},
		Demo: DemoConfig{Rate: 20},
		UI:   UIConfig{Theme: "dark", Refresh: 250 * time.Millisecond},
	}
}
