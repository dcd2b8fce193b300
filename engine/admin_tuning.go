package engine

import (
	"net/http"
	"strings"
)

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
