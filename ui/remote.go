package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// Remote is a running rpcdash reached over its admin API (console
// --attach). It says it is the console (X-Rpcdash-Actor), so its actions
// read "console" in the instance's event log.
type Remote struct {
	base   string // "http://host:port", no trailing slash
	token  string
	client *http.Client
	// tokenFrom names where the token came from, for a 401's words
	// ("--token" unless SetTokenSource says otherwise).
	tokenFrom string
}

// SetTokenSource names where the token came from (the environment's
// RPCDASH_SERVER_ADMIN_TOKEN): a wrong one read "--token is not its
// server.admin_token" to an operator who gave no --token.
func (r *Remote) SetTokenSource(name string) { r.tokenFrom = name }

// maxStatusBytes bounds what one /v1/status answer may hold in memory.
const maxStatusBytes = 64 << 20

// NewRemote checks the admin URL ("http://HOST:PORT" or "HOST:PORT").
func NewRemote(adminURL, token string) (*Remote, error) {
	base, err := engine.BaseURL("--attach", adminURL)
	if err != nil {
		return nil, err
	}
	return &Remote{base: base, token: token, tokenFrom: "--token",
		client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}}}, nil
}

// URL is the admin URL the console is attached to.
func (r *Remote) URL() string { return r.base }

// Close lets go of idle connections.
func (r *Remote) Close() { r.client.CloseIdleConnections() }

// do calls the admin API and decodes its answer into out, every string
// in it made printable first (printableJSON).
func (r *Remote) do(ctx context.Context, method, path string, body, out any) error {
	if out == nil {
		return r.call(ctx, method, path, body, nil)
	}
	var raw []byte
	if err := r.call(ctx, method, path, body, &raw); err != nil {
		return err
	}
	clean, err := printableJSON(raw)
	if err == nil {
		err = json.Unmarshal(clean, out)
	}
	if err != nil {
		return fmt.Errorf("%s%s: not an rpcdash answer: %v", r.base, path, err)
	}
	return nil
}

func (r *Remote) call(ctx context.Context, method, path string, body, out any) error {
	c := engine.AdminClient{Base: r.base, Token: r.token, Actor: engine.ActorConsole, HTTP: r.client, MaxBytes: maxStatusBytes}
	err := c.Do(ctx, method, path, body, out)
	var ae *engine.AdminError
	switch {
	case !errors.As(err, &ae):
		return err
	case ae.Code != 0 && ae.FromAPI && ae.Err != nil:
		return fmt.Errorf("HTTP %d: %w", ae.Code, ae.Err) // a refused promotion: engine.IsPromotionRefused finds it
	case ae.Code == http.StatusUnauthorized && r.token == "":
		// What to do, in the header's bounded width: the API's own text
		// ("a valid bearer token (server.admin_token) is required") was
		// cut there before it said it.
		return fmt.Errorf("HTTP 401: needs --token (its server.admin_token)")
	case ae.Code == http.StatusUnauthorized && r.tokenFrom != "--token":
		// Shorter: the variable's long name and the header's width.
		return fmt.Errorf("HTTP 401: %s is not its token", r.tokenFrom)
	case ae.Code == http.StatusUnauthorized:
		return fmt.Errorf("HTTP 401: --token is not its server.admin_token")
	case ae.Code != 0 && ae.FromAPI:
		return fmt.Errorf("HTTP %d: %s", ae.Code, ae.Text)
	case ae.NotRpcdash():
		// Another program there: a web server, a JSON-RPC node's port.
		return fmt.Errorf("%s, from %s%s", ae.NotRpcdashText(), r.base, path)
	case ae.Code != 0:
		return fmt.Errorf("HTTP %d from %s%s", ae.Code, r.base, path)
	case ae.Decoding:
		return fmt.Errorf("%s%s: not an rpcdash answer: %v", r.base, path, ae.Err)
	case errors.Is(ae.Err, context.DeadlineExceeded):
		// Up but hung, or a host that drops packets: "unreachable:
		// context deadline exceeded" said neither in words.
		return fmt.Errorf("%s did not answer in time", r.base)
	case ae.Reading:
		return fmt.Errorf("%s: reading answer: %s", r.base, shortNetError(ae.Err))
	}
	return fmt.Errorf("%s unreachable: %s", r.base, shortNetError(ae.Err))
}

// shortNetError keeps the part of a transport error an operator reads.
func shortNetError(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

func (r *Remote) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	var s engine.Snapshot
	err := r.do(ctx, http.MethodGet, "/v1/status?compact=1", nil, &s)
	return s, err
}

func (r *Remote) Events(ctx context.Context, after uint64) ([]engine.Event, error) {
	var out struct {
		Events []engine.Event `json:"events"`
	}
	err := r.do(ctx, http.MethodGet, "/v1/events?since="+strconv.FormatUint(after, 10), nil, &out)
	return out.Events, err
}

func (r *Remote) Drain(ctx context.Context, name string) error {
	return r.do(ctx, http.MethodPost, "/v1/endpoints/"+url.PathEscape(name)+"/drain", nil, nil)
}

func (r *Remote) Undrain(ctx context.Context, name string) error {
	return r.do(ctx, http.MethodPost, "/v1/endpoints/"+url.PathEscape(name)+"/undrain", nil, nil)
}

func (r *Remote) InjectFault(ctx context.Context, name string, spec engine.FaultSpec) error {
	return r.do(ctx, http.MethodPost, "/v1/endpoints/"+url.PathEscape(name)+"/fault", spec, nil)
}

func (r *Remote) ClearFault(ctx context.Context, name string) error {
	return r.do(ctx, http.MethodDelete, "/v1/endpoints/"+url.PathEscape(name)+"/fault", nil, nil)
}

func (r *Remote) SetHedge(ctx context.Context, u engine.HedgeUpdate) error {
	return r.do(ctx, http.MethodPut, "/v1/hedge", u, nil)
}

func (r *Remote) SetRole(ctx context.Context, name, role string, share *float64, force bool) error {
	body := map[string]any{"role": role}
	if share != nil {
		body["share"] = *share
	}
	if force {
		body["force"] = true
	}
	return r.do(ctx, http.MethodPut, "/v1/endpoints/"+url.PathEscape(name)+"/role", body, nil)
}

func (r *Remote) Distribution(ctx context.Context, method string) (engine.MethodDistribution, error) {
	var md engine.MethodDistribution
	err := r.do(ctx, http.MethodGet, "/v1/methods/"+url.PathEscape(method)+"/distribution", nil, &md)
	return md, err
}

func (r *Remote) Forecast(ctx context.Context, method string, delays []string) (engine.ForecastReport, error) {
	var rep engine.ForecastReport
	q := url.Values{"method": {method}, "delays": {strings.Join(delays, ",")}}
	err := r.do(ctx, http.MethodGet, "/v1/hedge/forecast?"+q.Encode(), nil, &rep)
	return rep, err
}
