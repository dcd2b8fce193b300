package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rpcdash/rpcdash/engine"
)

// Admin is a running rpcdash's admin API, as bench and the drill use it.
// The decoded documents below hold only the fields they read.
type Admin struct {
	URL         string // e.g. "http://127.0.0.1:8546"
	Token       string // server.admin_token, sent as a bearer token when set
	Client      *http.Client
	AllowRemote bool
	// Actor is who the calls act for in the instance's events (its
	// X-Rpcdash-Actor): "console" for a drill started from a console; ""
	// is the admin API's own, "admin".
	Actor string
}

// statusDoc is GET /v1/status.
type statusDoc struct {
	Routable  int                     `json:"routable"`
	InFlight  int64                   `json:"in_flight"`
	Hedge     hedgeStatus             `json:"hedge"`
	Totals    methodStatus            `json:"totals"`
	Methods   map[string]methodStatus `json:"methods"`
	Endpoints []endpointStatus        `json:"endpoints"`
	Settings  engineSettings          `json:"settings"`
}

type hedgeStatus struct {
	Enabled  bool    `json:"enabled"`
	Delay    string  `json:"delay"`
	Quantile float64 `json:"quantile"`
	Budget   float64 `json:"budget"`
	Burst    float64 `json:"budget_burst"`
	MaxExtra int     `json:"max_extra"`
}

// methodStatus is one method's (or the totals') cumulative accounting.
type methodStatus struct {
	Requests     int64   `json:"requests"`
	Primary      int64   `json:"primary"`
	Hedge        int64   `json:"hedge"`
	Failover     int64   `json:"failover"`
	Failures     int64   `json:"failures"`
	HedgesFired  int64   `json:"hedges_fired"`
	HedgesWon    int64   `json:"hedges_won"`
	Losers       int64   `json:"cancelled_losers"`
	LoserSeconds float64 `json:"loser_upstream_seconds"`
	ClientErrors int64   `json:"client_errors"`
	DelayMS      float64 `json:"hedge_delay_ms"`
	DelaySource  string  `json:"hedge_delay_source"`
	HedgeEnabled *bool   `json:"hedge_enabled"`
}

func (m methodStatus) attempts() int64 { return m.Primary + m.Hedge + m.Failover }

type endpointStatus struct {
	Name     string `json:"name"`
	Routable bool   `json:"routable"`
	Drained  bool   `json:"drained"`
	Breaker  struct {
		State               string `json:"state"`
		ConsecutiveFailures int    `json:"consecutive_failures"`
		TrialSuccesses      int    `json:"trial_successes"`
	} `json:"breaker"`
	BackoffUntil *time.Time `json:"backoff_until"`
	Fault        *struct {
		Mode string `json:"mode"`
	} `json:"fault"`
	LagExcluded bool     `json:"lag_excluded"`
	Lag         int64    `json:"lag"`
	Exclusions  []string `json:"exclusions"`
	Latency     struct {
		Count int64   `json:"count"`
		P50   float64 `json:"p50_ms"`
	} `json:"latency"`
	Accounting methodStatus `json:"accounting"`
}

type engineSettings struct {
	BreakerFailures  int     `json:"breaker_failures"`
	BreakerSuccesses int     `json:"breaker_successes"`
	BreakerCooldown  string  `json:"breaker_cooldown"`
	RouterTolerance  float64 `json:"router_tolerance"`
	ProbeTrials      bool    `json:"probe_trials"`
	ProbeInterval    string  `json:"probe_interval"`
}

// event is one entry of GET /v1/events.
type event struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Type     string    `json:"type"`
	Endpoint string    `json:"endpoint"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	Message  string    `json:"message"`
}

// hedgeUpdate is the body of PUT /v1/hedge.
type hedgeUpdate struct {
	Enabled  *bool    `json:"enabled,omitempty"`
	Delay    *string  `json:"delay,omitempty"`
	Quantile *float64 `json:"quantile,omitempty"`
	Budget   *float64 `json:"budget,omitempty"`
}

// restoreOf is the update that puts hedging back as s shows it.
func restoreOf(s hedgeStatus) hedgeUpdate {
	return hedgeUpdate{Enabled: &s.Enabled, Delay: &s.Delay, Quantile: &s.Quantile, Budget: &s.Budget}
}

func (a Admin) do(ctx context.Context, method, path string, body any, out any) error {
	if err := checkTarget(a.URL, a.AllowRemote); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := engine.AdminClient{Base: a.URL, Token: a.Token, Actor: engine.Actor(a.Actor), HTTP: a.Client}
	if err := c.Do(ctx, method, path, body, out); err != nil {
		return fmt.Errorf("admin API %s %s: %w", method, path, err)
	}
	return nil
}

func (a Admin) status(ctx context.Context) (statusDoc, error) {
	var s statusDoc
	return s, a.do(ctx, http.MethodGet, "/v1/status", nil, &s)
}

func (a Admin) setHedge(ctx context.Context, u hedgeUpdate) error {
	return a.do(ctx, http.MethodPut, "/v1/hedge", u, nil)
}

func (a Admin) events(ctx context.Context, since uint64) ([]event, error) {
	var out struct{ Events []event }
	return out.Events, a.do(ctx, http.MethodGet, fmt.Sprintf("/v1/events?since=%d", since), nil, &out)
}

func (a Admin) injectFault(ctx context.Context, endpoint string, spec map[string]any) error {
	return a.do(ctx, http.MethodPost, "/v1/endpoints/"+endpoint+"/fault", spec, nil)
}

func (a Admin) clearFault(ctx context.Context, endpoint string) error {
	return a.do(ctx, http.MethodDelete, "/v1/endpoints/"+endpoint+"/fault", nil, nil)
}

// attemptOutcomes sums rpcdash_attempts_total from GET /metrics by outcome,
// over the methods given: a monotonic count, unlike the status windows.
func (a Admin) attemptOutcomes(ctx context.Context, methods []string) (map[string]float64, error) {
	var raw []byte
	if err := a.do(ctx, http.MethodGet, "/metrics", nil, &raw); err != nil {
		return nil, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("admin API /metrics: %w", err)
	}
	out := map[string]float64{}
	fam := fams["rpcdash_attempts_total"]
	if fam == nil {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		if method := label(m, "method"); slices.Contains(methods, method) {
			out[label(m, "outcome")] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
