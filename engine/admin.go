package engine

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
)

// AdminHandler serves the admin API and /metrics over the control API.
func (e *Engine) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, e.Snapshot())
	})
	mux.HandleFunc("POST /v1/endpoints/{name}/drain", e.endpointAction(e.Drain))
	mux.HandleFunc("POST /v1/endpoints/{name}/undrain", e.endpointAction(e.Undrain))
	mux.HandleFunc("POST /v1/endpoints/{name}/fault", func(w http.ResponseWriter, r *http.Request) {
		var req faultRequest
		if err := decodeJSON(r, &req); err != nil {
			writeAPIError(w, http.StatusBadRequest, err.Error())
			return
		}
		e.respond(w, r.PathValue("name"), e.InjectFault(actorOf(r), r.PathValue("name"), req.spec()))
	})
	mux.HandleFunc("DELETE /v1/endpoints/{name}/fault", e.endpointAction(e.ClearFault))
	mux.HandleFunc("PUT /v1/hedge", func(w http.ResponseWriter, r *http.Request) {
		var u HedgeUpdate
		if err := decodeJSON(r, &u); err != nil {
			writeAPIError(w, http.StatusBadRequest, err.Error())
			return
		}
		if err := e.SetHedge(actorOf(r), u); err != nil {
			writeAPIError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, e.hedge.status())
	})
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
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
	mux.Handle("GET /metrics", e.metrics.handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, http.StatusNotFound, "no such admin call: "+r.Method+" "+r.URL.Path)
	})
	if e.cfg.Server.AdminToken == "" {
		return mux
	}
	want := []byte("Bearer " + e.cfg.Server.AdminToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="rpcdash"`)
			writeAPIError(w, http.StatusUnauthorized, "a valid bearer token (server.admin_token) is required")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (e *Engine) endpointAction(fn func(Actor, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		e.respond(w, name, fn(actorOf(r), name))
	}
}

// actorOf is who an admin call acts for: "console" when an attached console
// says so in X-Rpcdash-Actor, else "admin" (a script, curl). The engine's
// own actions cannot be claimed from outside.
func actorOf(r *http.Request) Actor {
	if r.Header.Get(HeaderActor) == string(ActorConsole) {
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
	case errors.Is(err, ErrNoEndpoint):
		writeAPIError(w, http.StatusNotFound, err.Error())
	default:
		writeAPIError(w, http.StatusBadRequest, err.Error())
	}
}

func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("request body: a JSON object is required")
		}
		return errors.New("request body: " + err.Error())
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeAPIError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// faultRequest is the body of POST …/fault: a FaultSpec that also takes
// "delay" and "latency_ms" as names of the added latency.
type faultRequest struct {
	FaultSpec
	Delay     *Duration `json:"delay,omitempty"`
	LatencyMS *float64  `json:"latency_ms,omitempty"`
}

func (f faultRequest) spec() FaultSpec {
	s := f.FaultSpec
	if f.Delay != nil {
		s.Latency = *f.Delay
	}
	if f.LatencyMS != nil {
		s.Latency = Duration(*f.LatencyMS * float64(time.Millisecond))
	}
	return s
}
