package engine

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// maxDrillHolder bounds a drill lease's holder, as it is shown.
const maxDrillHolder = 512

// drillLeaseRequest is the body of POST /v1/drill and PUT /v1/drill/{id}.
type drillLeaseRequest struct {
	Holder string    `json:"holder"`
	TTL    *Duration `json:"ttl"` // nil when omitted: a ttl given as 0 is refused, not defaulted
}

// drillLeaseTTL is a lease's span when the request names none.
const drillLeaseTTL = 15 * time.Second

func (q drillLeaseRequest) ttl() (time.Duration, error) {
	if q.TTL == nil {
		return drillLeaseTTL, nil
	}
	switch d := q.TTL.D(); {
	case d <= 0 || d > drillLeaseMaxTTL:
		return 0, fmt.Errorf("ttl: %s is not in (0s, %s]", d, drillLeaseMaxTTL)
	default:
		return d, nil
	}
}

// serveDrillLease answers the drill lease's calls (drill_lease.go).
func (e *Engine) serveDrillLease(w http.ResponseWriter, r *http.Request) {
	var q drillLeaseRequest
	if r.Method != http.MethodDelete {
		if err := decodeJSON(w, r, &q); err != nil {
			writeBodyError(w, err)
			return
		}
	} else if err := noBody(w, r); err != nil {
		writeBodyError(w, err)
		return
	}
	ttl, err := q.ttl()
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	var lease DrillLease
	switch r.Method {
	case http.MethodPost:
		if q.Holder == "" {
			writeAPIError(w, http.StatusBadRequest, "holder: required (who runs the drill, for the message another drill is refused with)")
			return
		}
		// The holder is shown in the status, the console and another
		// drill's refusal: 1 MiB came back whole in each, and a newline
		// in it began a line of its own in `rpcdash status`.
		if len(q.Holder) > maxDrillHolder || !printable(q.Holder) {
			writeAPIError(w, http.StatusBadRequest, fmt.Sprintf("holder: at most %d bytes of printable text, no control characters", maxDrillHolder))
			return
		}
		lease, err = e.AcquireDrill(q.Holder, ttl)
	case http.MethodPut:
		lease, err = e.RenewDrill(r.PathValue("id"), ttl)
	default:
		err = e.ReleaseDrill(r.PathValue("id"))
	}
	switch {
	case errors.Is(err, errDrillRunning):
		writeAPIError(w, http.StatusConflict, err.Error())
	case errors.Is(err, errNoDrillLease):
		writeAPIError(w, http.StatusNotFound, err.Error())
	case err != nil:
		writeAPIError(w, http.StatusBadRequest, err.Error())
	case r.Method == http.MethodDelete:
		writeJSON(w, http.StatusOK, map[string]bool{"released": true})
	default:
		writeJSON(w, http.StatusOK, lease)
	}
}
