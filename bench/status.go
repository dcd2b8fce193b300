package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// methodStatus is one method's entry in the engine's GET /v1/status.
type methodStatus struct {
	Primary     int64   `json:"primary"`
	Hedge       int64   `json:"hedge"`
	Failover    int64   `json:"failover"`
	HedgesWon   int64   `json:"hedges_won"`
	DelayMS     float64 `json:"hedge_delay_ms"`
	DelaySource string  `json:"hedge_delay_source"`
}

// readStatus fetches methods[method] from GET /v1/status; a method the
// engine has not seen yet reads as zero.
func readStatus(ctx context.Context, c *http.Client, adminURL, method string) (methodStatus, error) {
	if err := checkLoopback(adminURL); err != nil {
		return methodStatus{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, adminURL+"/v1/status", nil)
	if err != nil {
		return methodStatus{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return methodStatus{}, fmt.Errorf("status: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return methodStatus{}, fmt.Errorf("status: HTTP %d", resp.StatusCode)
	}
	var st struct {
		Methods map[string]methodStatus `json:"methods"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return methodStatus{}, fmt.Errorf("status: %w", err)
	}
	return st.Methods[method], nil
}

// delayPollEvery samples the delay about twenty times a run, at most once
// every 250 ms.
func delayPollEvery(run time.Duration) time.Duration { return max(run/20, 250*time.Millisecond) }

// pollDelay samples the method's hedge delay until ctx ends: an auto delay
// moves during a run, and the final value alone can mislead.
func pollDelay(ctx context.Context, c *http.Client, adminURL, method string, every time.Duration) []float64 {
	var out []float64
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
			if st, err := readStatus(ctx, c, adminURL, method); err == nil {
				out = append(out, st.DelayMS)
			}
		}
	}
}
