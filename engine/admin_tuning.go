package engine

import (
	"errors"
	"net/http"
	"strings"
)

// hedgeRequest is PUT /v1/hedge's body. Method is a pointer so that a
// method given empty is told from none: {"enabled": false, "method": ""}
// from a script whose variable was unset turned hedging off for every
// method, where it meant one. Its fields are HedgeUpdate's, kept in step.
type hedgeRequest struct {
	Enabled    *bool    `json:"enabled"`
	Delay      *string  `json:"delay"`
	Method     *string  `json:"method"`
	AllMethods bool     `json:"all_methods"`
	Quantile   *float64 `json:"quantile"`
	Budget     *float64 `json:"budget"`
}

func (h hedgeRequest) update() (HedgeUpdate, error) {
	u := HedgeUpdate{Enabled: h.Enabled, Delay: h.Delay, AllMethods: h.AllMethods, Quantile: h.Quantile, Budget: h.Budget}
	if h.Method != nil {
		if *h.Method == "" {
			return u, errors.New("method: empty; omit it to change the global setting, or name a method")
		}
		u.Method = *h.Method
	}
	return u, nil
}

// PUT /v1/hedge: tune hedging live.
func (e *Engine) serveSetHedge(w http.ResponseWriter, r *http.Request) {
	var req hedgeRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeBodyError(w, err)
		return
	}
	u, err := req.update()
	if err == nil {
		err = e.SetHedge(actorOf(r), u)
	}
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	if u.Method == "" {
		writeJSON(w, http.StatusOK, e.hedge.status())
		return
	}
	reply := methodHedgeReply{hedgeWire: e.hedge.status().wire(), Method: u.Method}
	if md, err := e.MethodDistribution(u.Method); err == nil {
		h := md.Hedge.wire()
		reply.MethodHedge = &h
	}
	writeJSON(w, http.StatusOK, reply)
}

// methodHedgeReply answers a change of one method's hedging: the pool's
// settings, as for any change, and beside them the method's now in force.
// The pool's alone read as if the change had not applied (a method set to
// 100ms answered "delay": "auto", its quantile 0.9 answered 0.95).
type methodHedgeReply struct {
	hedgeWire
	Method      string           `json:"method"`
	MethodHedge *methodHedgeWire `json:"method_hedge,omitempty"`
}

// GET /v1/methods/{method}/distribution: the method's primary-latency
// distribution, its hedge targets' and its hedging now.
func (e *Engine) serveDistribution(w http.ResponseWriter, r *http.Request) {
	md, err := e.MethodDistribution(r.PathValue("method"))
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, md)
}

// GET /v1/hedge/forecast?method=M&delays=50ms,90ms,auto: the model's
// prediction for each delay (defaultForecastDelays when none are given).
func (e *Engine) serveForecast(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := onlyParams(q, "method", "delays"); err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	var delays []string
	for _, v := range q["delays"] {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				delays = append(delays, d)
			}
		}
	}
	if len(q["method"]) > 1 {
		writeAPIError(w, http.StatusBadRequest, "method: give one method")
		return
	}
	rep, err := e.HedgeForecast(q.Get("method"), delays)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
