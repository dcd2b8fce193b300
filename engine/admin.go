package engine

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// AdminHandler serves the admin API and /metrics over the control API.
func (e *Engine) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		compact, err := compactParam(r)
		if err != nil {
			writeAPIError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSONIndented(w, http.StatusOK, e.Snapshot(), !compact)
	})
	mux.HandleFunc("POST /v1/endpoints/{name}/drain", e.endpointAction(e.Drain))
	mux.HandleFunc("POST /v1/endpoints/{name}/undrain", e.endpointAction(e.Undrain))
	mux.HandleFunc("POST /v1/endpoints/{name}/fault", func(w http.ResponseWriter, r *http.Request) {
		var req faultRequest
		if err := decodeJSON(w, r, &req); err != nil {
			writeBodyError(w, err)
			return
		}
		spec, err := req.spec()
		if err == nil {
			err = e.InjectFault(actorOf(r), r.PathValue("name"), spec)
		}
		e.respond(w, r.PathValue("name"), err)
	})
	mux.HandleFunc("DELETE /v1/endpoints/{name}/fault", e.endpointAction(e.ClearFault))
	mux.HandleFunc("PUT /v1/endpoints/{name}/role", e.serveSetRole)
	mux.HandleFunc("PUT /v1/hedge", e.serveSetHedge)
	mux.HandleFunc("GET /v1/drill", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, e.currentDrill())
	})
	mux.HandleFunc("POST /v1/drill", e.serveDrillLease)
	mux.HandleFunc("PUT /v1/drill/{id}", e.serveDrillLease)
	mux.HandleFunc("DELETE /v1/drill/{id}", e.serveDrillLease)
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		if err := onlyParams(r.URL.Query(), "since"); err != nil {
			writeAPIError(w, http.StatusBadRequest, err.Error())
			return
		}
		var after uint64
		if s := r.URL.Query().Get("since"); s != "" {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				writeAPIError(w, http.StatusBadRequest, "since: must be an event sequence number")
				return
			}
			after = v
		}
		evs := e.Events(after)
		if evs == nil {
			evs = []Event{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"events": evs})
	})
	mux.HandleFunc("GET /v1/methods/{method}/distribution", e.serveDistribution)
	mux.HandleFunc("GET /v1/hedge/forecast", e.serveForecast)
	mux.HandleFunc("GET /v1/requests", e.serveTraces)
	mux.HandleFunc("GET /v1/requests/{id}", e.serveTrace)
	mux.Handle("GET /metrics", e.metrics.handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		closeUnreadBody(w, r, e.cfg.Server.ReadTimeout)
		if allowed := allowedMethods(mux, r); len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeAPIError(w, http.StatusMethodNotAllowed, r.URL.Path+" takes "+strings.Join(allowed, " or ")+", not "+redact.Sanitize(r.Method, 16))
			return
		}
		writeAPIError(w, http.StatusNotFound, "no such admin call: "+redact.Sanitize(r.Method, 16)+" "+redact.Sanitize(r.URL.Path, 128))
	})
	routed := func(r *http.Request) bool {
		_, pattern := mux.Handler(r)
		return pattern != "/" // the catch-all answers 404 and 405
	}
	guard := newBrowserGuard(e.cfg.Server, routed, writeAPIError)
	if e.cfg.Server.AdminToken == "" {
		return guard.wrap(mux)
	}
	want := []byte(e.cfg.Server.AdminToken)
	return guard.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 9110 §11.1): "bearer" too.
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimLeft(got, " ")), want) != 1 {
			closeUnreadBody(w, r, e.cfg.Server.ReadTimeout)
			w.Header().Set("WWW-Authenticate", `Bearer realm="rpcdash"`)
			writeAPIError(w, http.StatusUnauthorized, "a valid bearer token (server.admin_token) is required")
			return
		}
		mux.ServeHTTP(w, r)
	}))
}

func (e *Engine) endpointAction(fn func(Actor, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := noBody(w, r); err != nil {
			writeBodyError(w, err)
			return
		}
		name := r.PathValue("name")
		e.respond(w, name, fn(actorOf(r), name))
	}
}

// actorOf is who an admin call acts for: "console" when an attached console
// says so in X-Rpcdash-Actor, else "admin" (a script, curl). The engine's
// own actions cannot be claimed from outside.
func actorOf(r *http.Request) Actor {
	if r.Header.Get(headerActor) == string(ActorConsole) {
		return ActorConsole
	}
	return ActorAdmin
}

func (e *Engine) respond(w http.ResponseWriter, name string, err error) {
	switch {
	case err == nil:
		for _, es := range e.Snapshot().Endpoints {
			if es.Name == name {
				writeJSON(w, http.StatusOK, es)
				return
			}
		}
	case errors.Is(err, errNoEndpoint):
		writeAPIError(w, http.StatusNotFound, err.Error())
	default:
		writeAPIError(w, http.StatusBadRequest, err.Error())
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONIndented(w, status, v, true)
}

func writeJSONIndented(w http.ResponseWriter, status int, v any, indent bool) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	enc.Encode(v)
}

// compactParam reads GET /v1/status's ?compact= (1/true or 0/false).
// Indented is for people reading it with curl; a program polling it (an
// attached console, four times a second) asks for it compact: on a pool
// of 16 endpoints the indented document was 486 KB against 304 KB and
// took over twice as long to encode.
func compactParam(r *http.Request) (bool, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "compact"); err != nil {
		return false, err
	}
	v := q.Get("compact")
	if v == "" {
		return false, nil
	}
	c, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("compact: %q is not 1, true, 0 or false", redact.Sanitize(v, redact.MaxUpstream))
	}
	return c, nil
}

func writeAPIError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// faultRequest is the body of POST …/fault: a FaultSpec whose added
// latency may also be named "delay" (a duration) or "latency_ms" (a
// number). Its fields are read one by one, so that every error names the
// field it is about, as the client spelled it.
type faultRequest struct {
	Mode       json.RawMessage `json:"mode"`
	Rate       json.RawMessage `json:"rate"`
	Latency    json.RawMessage `json:"latency"`
	Delay      json.RawMessage `json:"delay"`
	LatencyMS  json.RawMessage `json:"latency_ms"`
	Duration   json.RawMessage `json:"duration"`
	RetryAfter json.RawMessage `json:"retry_after"`
}

func given(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

func (f faultRequest) spec() (FaultSpec, error) {
	var s FaultSpec
	if !given(f.Mode) {
		return s, errors.New("mode: required (" + faultModeList() + ")")
	}
	var mode string
	if json.Unmarshal(f.Mode, &mode) != nil {
		return s, errors.New("mode: must be a string (" + faultModeList() + ")")
	}
	s.Mode = FaultMode(mode)
	if given(f.Rate) {
		if json.Unmarshal(f.Rate, &s.Rate) != nil || !(s.Rate > 0 && s.Rate <= 1) {
			return s, fmt.Errorf("rate: must be a number in (0, 1] (omit it for every request), got %s", redact.Sanitize(string(f.Rate), 64))
		}
	}
	var err error
	if s.Duration, err = durationField("duration", f.Duration); err != nil {
		return s, err
	}
	if s.RetryAfter, err = durationField("retry_after", f.RetryAfter); err != nil {
		return s, err
	}
	latencyName := ""
	for _, l := range []struct {
		name string
		v    json.RawMessage
	}{{"latency", f.Latency}, {"delay", f.Delay}, {"latency_ms", f.LatencyMS}} {
		if !given(l.v) {
			continue
		}
		if latencyName != "" {
			return s, fmt.Errorf("%s: give one of latency, delay and latency_ms, not %s as well", l.name, latencyName)
		}
		latencyName = l.name
		if l.name == "latency_ms" {
			var ms float64
			if json.Unmarshal(l.v, &ms) != nil || !(ms > 0 && ms <= float64(maxFaultLatency/time.Millisecond)) {
				return s, fmt.Errorf("latency_ms: must be a number of milliseconds in (0, %d], got %s",
					maxFaultLatency/time.Millisecond, redact.Sanitize(string(l.v), 64))
			}
			s.Latency = Duration(ms * float64(time.Millisecond))
		} else if s.Latency, err = durationField(l.name, l.v); err != nil {
			return s, err
		}
		if s.Latency <= 0 {
			return s, fmt.Errorf("%s: must be positive, got %s", l.name, s.Latency.D())
		}
	}
	if err := s.Validate(); err != nil {
		if latencyName != "" && strings.HasPrefix(err.Error(), "latency:") {
			return s, errors.New(latencyName + strings.TrimPrefix(err.Error(), "latency"))
		}
		return s, err
	}
	return s, nil
}

// durationField reads an optional duration ("150ms", or nanoseconds),
// naming the field when it is not one.
func durationField(name string, v json.RawMessage) (Duration, error) {
	if !given(v) {
		return 0, nil
	}
	var d Duration
	if err := d.UnmarshalJSON(v); err != nil {
		return 0, fmt.Errorf("%s: must be a duration such as \"150ms\", got %s", name, redact.Sanitize(string(v), 64))
	}
	return d, nil
}

// allowedMethods are the methods the admin API serves r's path with, when
// it serves it at all with another than r's: a wrong method is a 405
// naming them, not a 404.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
			allowed = append(allowed, m)
		}
	}
	return allowed
}
