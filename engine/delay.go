package engine

import (
	"fmt"
	"strings"
	"time"
)

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
		return 0, fmt.Errorf("must be \"auto\" or a duration such as \"120ms\", got %s", ShowConfigValue(s))
	}
	if d < 0 {
		return 0, fmt.Errorf("must not be negative, got %s", ShowConfigValue(s))
	}
	if d == 0 && strings.ContainsAny(s, "123456789") {
		// Below a nanosecond: it would be a real zero, a duplicate at once.
		return 0, fmt.Errorf("%s is below 1ns and would be 0s, a duplicate at once: write \"0s\" for that", ShowConfigValue(s))
	}
	return d, nil
}

// FormatDelay writes a delay as ParseDelay reads it: "auto" for AutoDelay,
// else the duration ("120ms").
func FormatDelay(d time.Duration) string {
	if d == AutoDelay {
		return "auto"
	}
	return d.String()
}

// checkFixedDelay is the rule config (hedge.delay) and the admin API
// (PUT /v1/hedge, the forecast's delays) share: a fixed delay above the
// request's own deadline would never fire.
func checkFixedDelay(d, requestTimeout time.Duration) error {
	if d != AutoDelay && d > requestTimeout {
		return fmt.Errorf("%s is above server.request_timeout (%s): the hedge would never fire", d, requestTimeout)
	}
	return nil
}

// checkMethodDelay is checkFixedDelay for one method's delay, whose limit is
// the method's own request deadline (a trace's 60 s).
func checkMethodDelay(d time.Duration, method string, limit, general time.Duration) error {
	if limit == general {
		return checkFixedDelay(d, general)
	}
	if d != AutoDelay && d > limit {
		return fmt.Errorf("%s is above %s's request deadline (%s): the hedge would never fire", d, method, limit)
	}
	return nil
}
