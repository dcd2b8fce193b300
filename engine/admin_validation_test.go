package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// Every admin input out of range is a 400 naming its field, and changes
// nothing.
func TestAdminValidation_OutOfRangeIs400NamingTheField(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	cases := []struct{ path, body, field string }{
		{"/v1/endpoints/s0/fault", `{"mode":"latency","latency_ms":1e13}`, "latency_ms"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","latency_ms":-5}`, "latency_ms"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","latency_ms":0}`, "latency_ms"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","latency_ms":"fast"}`, "latency_ms"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","latency":"-5ms"}`, "latency"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","latency":"3h"}`, "latency"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","latency":"soon"}`, "latency"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","delay":"0s"}`, "delay"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","delay":"2h"}`, "delay"},
		{"/v1/endpoints/s0/fault", `{"mode":"latency","latency":"1s","delay":"1s"}`, "delay"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","latency":"1s"}`, "latency"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","duration":"-1h"}`, "duration"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","duration":"100000h"}`, "duration"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","duration":"forever"}`, "duration"},
		{"/v1/endpoints/s0/fault", `{"mode":"http429","retry_after":"-1h"}`, "retry_after"},
		{"/v1/endpoints/s0/fault", `{"mode":"http429","retry_after":"48h"}`, "retry_after"},
		{"/v1/endpoints/s0/fault", `{"mode":"http429","retry_after":true}`, "retry_after"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","retry_after":"1s"}`, "retry_after"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","rate":1.5}`, "rate"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","rate":-0.1}`, "rate"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","rate":0}`, "rate"},
		{"/v1/endpoints/s0/fault", `{"mode":"error","rate":"half"}`, "rate"},
		{"/v1/endpoints/s0/fault", `{"mode":"explode"}`, "mode"},
		{"/v1/endpoints/s0/fault", `{"rate":0.5}`, "mode"},
		{"/v1/endpoints/s0/fault", `{"mode":7}`, "mode"},
		{"/v1/hedge", `{"delay":"1000h"}`, "delay"},
		{"/v1/hedge", `{"delay":"-5ms"}`, "delay"},
		// Below a nanosecond: it parsed as 0s, a duplicate of every read at once.
		{"/v1/hedge", `{"delay":"0.5ns"}`, "delay"},
		{"/v1/hedge", `{"delay":".9ns","method":"eth_call"}`, "delay"},
		{"/v1/hedge", `{"delay":"20ms","method":"` + strings.Repeat("m", 200) + `"}`, "method"},
		{"/v1/hedge", `{"delay":"20ms","method":"eth_call\u001b[2J"}`, "method"},
	}
	for _, c := range cases {
		method := "POST"
		if c.path == "/v1/hedge" {
			method = "PUT"
		}
		code, b := h.adminDo(method, c.path, c.body)
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if code != 400 || !strings.HasPrefix(e.Error, c.field+":") {
			t.Errorf("%s %s: HTTP %d %q; want 400 starting with %q", c.path, c.body, code, e.Error, c.field+":")
		}
	}
	s := h.status()
	if s.Endpoints[0].Fault != nil || s.Hedge.DelaySource == "live" {
		t.Fatalf("a refused call changed state: fault %+v, hedge %+v", s.Endpoints[0].Fault, s.Hedge)
	}
	for _, q := range []string{"-1", "abc", "18446744073709551616"} {
		if code, b := h.adminDo("GET", "/v1/events?since="+q, ""); code != 400 || !strings.Contains(string(b), "since") {
			t.Errorf("since=%s: HTTP %d %s", q, code, b)
		}
	}
}

// A method given empty is a 400 naming it, not the global setting: a
// script's {"enabled": false, "method": "$M"} with M unset turned hedging
// off for every method, where it meant one.
func TestAdminValidation_AnEmptyHedgeMethodIsRefusedNotTakenForGlobal(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"enabled":true}`); code != 200 {
		t.Fatalf("enabling hedging: HTTP %d %s", code, b)
	}
	for _, body := range []string{`{"enabled":false,"method":""}`, `{"delay":"20ms","method":""}`, `{"enabled":false,"method":"","all_methods":true}`} {
		code, b := h.adminDo("PUT", "/v1/hedge", body)
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if code != 400 || !strings.HasPrefix(e.Error, "method:") {
			t.Errorf("%s: HTTP %d %s; want 400 naming method", body, code, b)
		}
	}
	if s := h.status(); !s.Hedge.Enabled || s.Hedge.DelaySource == "live" {
		t.Fatalf("a refused call changed hedging: %+v", s.Hedge)
	}
	// null is as good as leaving it out.
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"enabled":false,"method":null}`); code != 200 || h.status().Hedge.Enabled {
		t.Fatalf("method null: HTTP %d %s", code, b)
	}
}

// since takes the whole uint64 range: past the newest event, nothing.
func TestAdminValidation_SinceHandlesItsWholeRange(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	h.adminDo("POST", "/v1/endpoints/s0/drain", "")
	h.adminDo("POST", "/v1/endpoints/s0/undrain", "")
	all := h.events()
	if len(all) < 2 {
		t.Fatalf("%d events", len(all))
	}
	last := all[len(all)-1].Seq
	for q, want := range map[string]int{"0": len(all), "18446744073709551615": 0, "18446744073709551614": 0} {
		code, b := h.adminDo("GET", "/v1/events?since="+q, "")
		var out struct{ Events []engine.Event }
		if code != 200 || json.Unmarshal(b, &out) != nil || len(out.Events) != want {
			t.Errorf("since=%s: HTTP %d, %d events, want %d", q, code, len(out.Events), want)
		}
	}
	if got := h.eng.Events(last - 1); len(got) != 1 || got[0].Seq != last {
		t.Fatalf("since the one before the newest: %+v", got)
	}
}

// A body the decoder refuses is a 400 starting with the field at fault, in
// words (not Go's decoder message), and so is a hedging setting for a method
// that is never hedged, worded as the distribution and forecast word it.
func TestAdminValidation_DecodeErrorsAndNeverHedgedMethodsNameTheField(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	cases := []struct{ method, path, body, want string }{
		{"PUT", "/v1/hedge", `{"enabled":"no"}`, `enabled: "no" is not a boolean`},
		{"PUT", "/v1/hedge", `{"quantile":"high"}`, `quantile: "high" is not a number`},
		{"PUT", "/v1/hedge", `{"enabled":true,"bogus":1}`, `bogus: unknown field (fields: enabled, delay, method, all_methods, quantile, budget)`},
		{"POST", "/v1/endpoints/s0/fault", `{"mode":"error","bogus":1}`, `bogus: unknown field (fields: mode, rate, latency, delay, latency_ms, duration, retry_after)`},
		// A bare number used to be nanoseconds: a 5 ns fault, gone at once.
		{"POST", "/v1/endpoints/s0/fault", `{"mode":"error","duration":5}`, `duration: must be a duration such as "150ms", got 5`},
		{"POST", "/v1/endpoints/s0/fault", `{"mode":"latency","latency":500}`, `latency: must be a duration such as "150ms", got 500`},
		{"POST", "/v1/endpoints/s0/fault", `{"mode":"http429","retry_after":1.5}`, `retry_after: must be a duration such as "150ms", got 1.5`},
		{"PUT", "/v1/hedge", `{"enabled":true`, `request body: unexpected EOF`},
		{"PUT", "/v1/hedge", `{"method":"eth_sendRawTransaction","enabled":true}`, `method: eth_sendRawTransaction is a write: never hedged`},
		{"PUT", "/v1/hedge", `{"method":"eth_newFilter","delay":"20ms"}`, `method: eth_newFilter is stateful (pinned to the endpoint holding its state): never hedged`},
		{"PUT", "/v1/hedge", `{"method":"mev_sendBundle","enabled":true}`, `method: mev_sendBundle is in no method table, so it is sent once like a write (methods.reads makes it a read): never hedged`},
		{"GET", "/v1/methods/eth_sendRawTransaction/distribution", ``, `method: eth_sendRawTransaction is a write: never hedged`},
		{"GET", "/v1/hedge/forecast?method=eth_sendRawTransaction", ``, `method: eth_sendRawTransaction is a write: never hedged`},
		// One JSON object, nothing after it; calls that take no body take none.
		{"PUT", "/v1/hedge", `{"enabled":false} x`, `request body: must be one JSON object, and more follows it`},
		{"POST", "/v1/endpoints/s0/fault", `{"mode":"error"} {"mode":"latency"}`, `request body: must be one JSON object, and more follows it`},
		{"POST", "/v1/endpoints/s0/fault", `null`, `request body: a JSON object is required`},
		{"PUT", "/v1/endpoints/s0/role", `["primary"]`, `request body: a JSON object is required`},
		{"POST", "/v1/endpoints/s0/drain", `notjson`, `request body: POST /v1/endpoints/s0/drain takes none (or {}), got notjson`},
		{"POST", "/v1/endpoints/s0/drain", `{"now":true}`, `request body: POST /v1/endpoints/s0/drain takes none (or {}), got {"now":true}`},
		{"POST", "/v1/endpoints/s0/fault", `{}`, `mode: required (latency, error, http429, timeout, stale, refused, unreachable)`},
		{"PUT", "/v1/hedge", `{"quantile":1}`, `quantile: must be in (0, 1), 0 and 1 excluded, got 1`},
		// A query a GET does not take is refused, as /v1/requests refuses one.
		{"GET", "/v1/events?snce=3", ``, `snce: unknown parameter (since)`},
		{"GET", "/v1/hedge/forecast?method=eth_getBalance&delay=50ms", ``, `delay: unknown parameter (method, delays)`},
	}
	for _, c := range cases {
		code, b := h.adminDo(c.method, c.path, c.body)
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if code != 400 || e.Error != c.want {
			t.Errorf("%s %s %s: HTTP %d %q\n  want 400 %q", c.method, c.path, c.body, code, e.Error, c.want)
		}
	}
	if _, ok := h.status().Methods["eth_sendRawTransaction"]; ok {
		t.Error("a refused setting created state for the method")
	}
	if ep := h.endpoint("s0"); ep.Drained || ep.Fault != nil || ep.Role != "primary" {
		t.Errorf("a refused call changed s0: drained %v fault %+v role %s", ep.Drained, ep.Fault, ep.Role)
	}
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/drain", " {} "); code != 200 {
		t.Errorf("drain with {}: HTTP %d %s", code, b)
	}
	if s := h.status().Hedge; s.DelaySource == "live" {
		t.Errorf("a refused call changed hedging: %+v", s)
	}
	if evs := h.events(); len(evs) > 0 && strings.Contains(evs[len(evs)-1].Message, "hedging") {
		t.Errorf("a refused call logged a change: %s", evs[len(evs)-1].Message)
	}
}

// A path the admin API serves with another method is a 405 naming the
// methods it takes (Allow), not a 404 saying there is no such call.
func TestAdminValidation_WrongMethodIs405(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/v1/status", "GET"},
		{"GET", "/v1/endpoints/s0/drain", "POST"},
		{"PUT", "/v1/endpoints/s0/fault", "POST, DELETE"},
	} {
		req, _ := http.NewRequest(c.method, h.admin+c.path, nil)
		req.Header.Set("Content-Type", "application/json")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != c.allow || !strings.Contains(string(b), "takes") {
			t.Errorf("%s %s: HTTP %d Allow %q %s, want 405 Allow %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"), b, c.allow)
		}
	}
	if code, b := h.adminDo("GET", "/v1/nothing", ""); code != http.StatusNotFound || !strings.Contains(string(b), "no such admin call") {
		t.Errorf("GET /v1/nothing: HTTP %d %s", code, b)
	}
}

// The wrong method is a 405 (and a path the API does not serve a 404)
// whatever the Content-Type: a page's 415 is for a call the API takes.
// POST /v1/status without one was a 415, which says to add a header that
// would not have helped.
func TestAdminValidation_WrongMethodIs405BeforeContentType(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"POST", "/v1/status", 405, "GET"},
		{"DELETE", "/v1/hedge", 405, "PUT"},
		{"PUT", "/v1/endpoints/s0/drain", 405, "POST"},
		{"POST", "/v1/nothing", 404, ""},
	} {
		code, header, body := h.sendFor(c.method, h.admin+c.path, "", nil)
		if code != c.status || header.Get("Allow") != c.allow {
			t.Errorf("%s %s without Content-Type: HTTP %d Allow %q %s; want %d Allow %q", c.method, c.path, code, header.Get("Allow"), body, c.status, c.allow)
		}
	}
}
