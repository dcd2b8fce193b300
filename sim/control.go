package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"
)

const controlPrefix = "/_sim/"

// ControlRequest is the body of POST /_sim/mode. Absent fields are left as
// they are.
type ControlRequest struct {
	Mode          *string  `json:"mode,omitempty"`
	ExtraLatency  *string  `json:"extra_latency,omitempty"` // a Go duration, e.g. "200ms"
	ErrorRate     *float64 `json:"error_rate,omitempty"`
	RateLimitRate *float64 `json:"rate_limit_rate,omitempty"`
	// RateLimitMethods confines the 429s to these methods; [] lifts it.
	RateLimitMethods *[]string `json:"rate_limit_methods,omitempty"`
	HeadLag          *int64    `json:"head_lag,omitempty"`
	HeadFrozen       *bool     `json:"head_frozen,omitempty"`
	HeadFixed        *int64    `json:"head_fixed,omitempty"` // report this head whatever the chain does (0 = follow it)
	HeadAhead        *int64    `json:"head_ahead,omitempty"` // report this many blocks beyond the true head
	Unhealthy        *bool     `json:"unhealthy,omitempty"`
	// The hostile modes' parameters (0 = default).
	HugeBytes       *int64  `json:"huge_bytes,omitempty"`
	TrickleInterval *string `json:"trickle_interval,omitempty"` // a Go duration
	JunkBytes       *int    `json:"junk_bytes,omitempty"`
	// ErrorCode and ErrorMessage are the error of mode rpc_error.
	ErrorCode    *int    `json:"error_code,omitempty"`
	ErrorMessage *string `json:"error_message,omitempty"`
	// RPCErrorMethods confines mode rpc_error to these methods; [] lifts it.
	RPCErrorMethods *[]string `json:"rpc_error_methods,omitempty"`
}

// Apply validates every field first and then applies them all, so a bad
// request changes nothing.
func (u *Upstream) Apply(c ControlRequest) error {
	var (
		mode  Mode
		extra time.Duration
		err   error
	)
	if c.Mode != nil {
		if mode, err = ParseMode(*c.Mode); err != nil {
			return err
		}
	}
	if c.ExtraLatency != nil {
		if extra, err = time.ParseDuration(*c.ExtraLatency); err != nil || extra < 0 {
			return fmt.Errorf("sim: extra_latency %q is not a non-negative duration", *c.ExtraLatency)
		}
	}
	for _, p := range []*float64{c.ErrorRate, c.RateLimitRate} {
		if p != nil && !isShare(*p) {
			return fmt.Errorf("sim: rate %v is outside [0,1]", *p)
		}
	}
	if c.RateLimitMethods != nil && slices.Contains(*c.RateLimitMethods, "") {
		return fmt.Errorf("sim: rate_limit_methods holds an empty name")
	}
	if c.RPCErrorMethods != nil && slices.Contains(*c.RPCErrorMethods, "") {
		return fmt.Errorf("sim: rpc_error_methods holds an empty name")
	}
	for _, f := range []struct {
		key string
		v   *int64
	}{{"head_lag", c.HeadLag}, {"head_fixed", c.HeadFixed}, {"head_ahead", c.HeadAhead}} {
		if f.v != nil && *f.v < 0 {
			return fmt.Errorf("sim: %s %d is negative", f.key, *f.v)
		}
	}
	hostile := u.snapshot().hostile
	if c.HugeBytes != nil {
		if *c.HugeBytes < 0 {
			return fmt.Errorf("sim: huge_bytes %d is negative", *c.HugeBytes)
		}
		hostile.hugeBytes = *c.HugeBytes
	}
	if c.TrickleInterval != nil {
		d, err := time.ParseDuration(*c.TrickleInterval)
		if err != nil || d < 0 {
			return fmt.Errorf("sim: trickle_interval %q is not a non-negative duration", *c.TrickleInterval)
		}
		hostile.trickleInterval = d
	}
	if c.JunkBytes != nil {
		if *c.JunkBytes < 0 || *c.JunkBytes > 64<<20 {
			return fmt.Errorf("sim: junk_bytes %d is outside [0, 64 MiB]", *c.JunkBytes)
		}
		hostile.junkBytes = *c.JunkBytes
	}

	if c.Mode != nil {
		u.SetMode(mode)
	}
	if c.ExtraLatency != nil {
		u.SetExtraLatency(extra)
	}
	if c.ErrorRate != nil {
		u.SetErrorRate(*c.ErrorRate)
	}
	if c.RateLimitRate != nil {
		u.SetRateLimitRate(*c.RateLimitRate)
	}
	if c.RateLimitMethods != nil {
		u.SetRateLimitMethods(*c.RateLimitMethods)
	}
	if c.HeadLag != nil {
		u.SetHeadLag(*c.HeadLag)
	}
	if c.HeadFrozen != nil {
		u.SetHeadFrozen(*c.HeadFrozen)
	}
	if c.HeadFixed != nil {
		u.SetHeadFixed(*c.HeadFixed)
	}
	if c.HeadAhead != nil {
		u.SetHeadAhead(*c.HeadAhead)
	}
	if c.Unhealthy != nil {
		u.SetUnhealthy(*c.Unhealthy)
	}
	if c.HugeBytes != nil || c.TrickleInterval != nil || c.JunkBytes != nil {
		u.SetHostile(hostile.hugeBytes, hostile.trickleInterval, hostile.junkBytes)
	}
	if c.RPCErrorMethods != nil {
		u.SetRPCErrorMethods(*c.RPCErrorMethods)
	}
	if c.ErrorCode != nil || c.ErrorMessage != nil {
		code, msg := u.RPCError()
		if c.ErrorCode != nil {
			code = *c.ErrorCode
		}
		if c.ErrorMessage != nil {
			msg = *c.ErrorMessage
		}
		u.SetRPCError(code, msg)
	}
	return nil
}

// serveControl is the control API; it is not counted in Counters.
//
//	GET  /_sim/counters  Counters as JSON
//	POST /_sim/mode      ControlRequest
//	POST /_sim/reset     zero counters, forget submissions and logged params
func (u *Upstream) serveControl(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	switch route {
	case "GET /_sim/counters":
		writeControl(w, http.StatusOK, u.Counters())
	case "POST /_sim/mode":
		var c ControlRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			writeControl(w, http.StatusBadRequest, map[string]string{"error": "sim: bad control body: " + err.Error()})
			return
		}
		if err := u.Apply(c); err != nil {
			writeControl(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		writeControl(w, http.StatusOK, map[string]string{"mode": string(u.Mode())})
	case "POST /_sim/reset":
		u.ResetRecords()
		u.ResetCounters()
		writeControl(w, http.StatusOK, map[string]bool{"ok": true})
	default:
		writeControl(w, http.StatusNotFound, map[string]string{"error": "sim: no control route " + route})
	}
}

func writeControl(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
