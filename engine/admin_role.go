package engine

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// roleRequest is the body of PUT /v1/endpoints/{name}/role.
type roleRequest struct {
	Role  *string  `json:"role"`
	Share *float64 `json:"share"`
	// Force takes a promotion the endpoint's evidence says fails.
	Force bool `json:"force"`
}

// serveSetRole: 200 with {"name", "role", "share"}; 404 for an unknown
// endpoint; 400 naming the field for a bad role or share or an unknown
// field; 409 when no endpoint would be left to answer clients, and 409
// with {"error", "promotion"} for a promotion the endpoint's own evidence
// says fails, unless "force": true (promote.go).
func (e *Engine) serveSetRole(w http.ResponseWriter, r *http.Request) {
	ep, err := e.endpoint(r.PathValue("name"))
	if err != nil {
		closeUnreadBody(w, r, e.cfg.Server.ReadTimeout)
		writeAPIError(w, http.StatusNotFound, err.Error())
		return
	}
	var req roleRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeBodyError(w, err)
		return
	}
	if req.Role == nil {
		writeAPIError(w, http.StatusBadRequest, fmt.Sprintf("role: required (%s)", strings.Join(Roles, ", ")))
		return
	}
	info, err := e.setRole(actorOf(r), ep, *req.Role, req.Share, req.Force)
	var bad *roleError
	if p, ok := IsPromotionRefused(err); ok {
		writeJSON(w, http.StatusConflict, struct {
			Error     string    `json:"error"`
			Promotion Promotion `json:"promotion"`
		}{err.Error(), p})
		return
	}
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, info)
	case errors.Is(err, errNoAnswerer):
		writeAPIError(w, http.StatusConflict, err.Error())
	case errors.As(err, &bad):
		writeAPIError(w, http.StatusBadRequest, err.Error())
	default:
		writeAPIError(w, http.StatusBadRequest, err.Error())
	}
}
