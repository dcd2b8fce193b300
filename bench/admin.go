package bench

import (
	"bytes"
	"context"
	"errors"
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
// Its documents are read into the engine's own types (engine.Snapshot is
// GET /v1/status), so that bench reads what the engine writes.
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

// attempts are the attempts upstream an account counts, of every role.
func attempts(a engine.AccountSnapshot) int64 { return a.Primary + a.Hedge + a.Failover }

// restoreOf is the update that puts hedging back as s shows it.
func restoreOf(s engine.HedgeStatus) engine.HedgeUpdate {
	delay := engine.FormatDelay(s.Delay)
	return engine.HedgeUpdate{Enabled: &s.Enabled, Delay: &delay, Quantile: &s.Quantile, Budget: &s.Budget}
}

func (a Admin) do(ctx context.Context, method, path string, body any, out any) error {
	if err := checkTarget(a.URL, a.AllowRemote); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := engine.AdminClient{Base: a.URL, Token: a.Token, Actor: engine.Actor(a.Actor), HTTP: a.Client}
	if err := c.Do(ctx, method, path, body, out); err != nil {
		var ae *engine.AdminError
		if errors.As(err, &ae) && ae.NotRpcdash() {
			// Another program at --admin: its page or error object,
			// dumped, named neither the URL nor the slip.
			return fmt.Errorf("no rpcdash admin API at %s: %s %s: %s", engine.ShownURL(a.URL), method, path, ae.NotRpcdashText())
		}
		return fmt.Errorf("admin API %s %s: %w", method, path, err)
	}
	return nil
}

func (a Admin) status(ctx context.Context) (engine.Snapshot, error) {
	var s engine.Snapshot
	return s, a.do(ctx, http.MethodGet, "/v1/status?compact=1", nil, &s)
}

func (a Admin) setHedge(ctx context.Context, u engine.HedgeUpdate) error {
	return a.do(ctx, http.MethodPut, "/v1/hedge", u, nil)
}

// failedRequests are the latest requests the instance answered with an
// error, newest first (GET /v1/requests): none while tracing is off.
func (a Admin) failedRequests(ctx context.Context) ([]engine.RequestTrace, error) {
	var rs engine.RequestTraces
	return rs.Requests, a.do(ctx, http.MethodGet, "/v1/requests?failed=true&limit=100", nil, &rs)
}

func (a Admin) events(ctx context.Context, since uint64) ([]engine.Event, error) {
	var out struct{ Events []engine.Event }
	return out.Events, a.do(ctx, http.MethodGet, fmt.Sprintf("/v1/events?since=%d", since), nil, &out)
}

// injectFault puts spec on endpoint and returns the endpoint as the fault
// found it.
func (a Admin) injectFault(ctx context.Context, endpoint string, spec map[string]any) (engine.EndpointSnapshot, error) {
	var ep engine.EndpointSnapshot
	return ep, a.do(ctx, http.MethodPost, "/v1/endpoints/"+endpoint+"/fault", spec, &ep)
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
