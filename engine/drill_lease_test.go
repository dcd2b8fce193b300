package engine

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// One drill at a time: a second is refused, naming the one running and
// when its lease ends; a drill killed outright (never renewing, never
// letting go) blocks the next one only until its lease expires; a renewal
// keeps it, and a lease let go or taken over cannot be renewed.
func TestDrillLease_OneDrillAtATimeAndAKilledOnesExpires(t *testing.T) {
	e, clock := clockedEngine(t, 1, nil)
	first, err := e.AcquireDrill("rpcdash drill (latency fault, pid 7 on box)", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second)
	_, err = e.AcquireDrill("the console's drill", 15*time.Second)
	if !errors.Is(err, errDrillRunning) || !strings.Contains(err.Error(), "a drill is running: rpcdash drill (latency fault, pid 7 on box), since") ||
		!strings.Contains(err.Error(), "(in 5s) unless it renews it") {
		t.Fatalf("a second drill: %v", err)
	}
	// Renewed, it holds 15 s from now.
	if _, err := e.RenewDrill(first.ID, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	clock.Advance(14 * time.Second)
	if _, err := e.AcquireDrill("the console's drill", 15*time.Second); !errors.Is(err, errDrillRunning) {
		t.Fatalf("a renewed lease was taken over: %v", err)
	}
	// Killed: no more renewals; past its expiry the next drill runs.
	clock.Advance(time.Second)
	second, err := e.AcquireDrill("the console's drill", 15*time.Second)
	if err != nil {
		t.Fatalf("a killed drill's lease still blocks after it expired: %v", err)
	}
	if _, err := e.RenewDrill(first.ID, 15*time.Second); !errors.Is(err, errNoDrillLease) {
		t.Errorf("the expired lease, taken over, renewed: %v", err)
	}
	if err := e.ReleaseDrill(first.ID); !errors.Is(err, errNoDrillLease) {
		t.Errorf("the expired lease, taken over, let go of the new one: %v", err)
	}
	if err := e.ReleaseDrill(second.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AcquireDrill("rpcdash drill", 15*time.Second); err != nil {
		t.Errorf("a lease let go still blocks: %v", err)
	}
}

// The admin API's drill lease: 409 with the running drill named, 404 for a
// lease no longer in force, 400 for a bad ttl (0 too) or no holder.
func TestDrillLease_AdminAPI(t *testing.T) {
	e, _ := clockedEngine(t, 1, nil)
	srv := httptest.NewServer(e.AdminHandler())
	defer srv.Close()
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	code, got := call(http.MethodPost, "/v1/drill", `{"holder":"drill A","ttl":"15s"}`)
	id, _ := got["id"].(string)
	if code != http.StatusOK || id == "" || got["holder"] != "drill A" || got["expires"] == nil {
		t.Fatalf("POST: %d %v", code, got)
	}
	if code, got := call(http.MethodPost, "/v1/drill", `{"holder":"drill B"}`); code != http.StatusConflict || !strings.Contains(got["error"].(string), "a drill is running: drill A") {
		t.Errorf("a second POST: %d %v", code, got)
	}
	if code, got := call(http.MethodPut, "/v1/drill/"+id, `{"ttl":"20s"}`); code != http.StatusOK || got["id"] != id {
		t.Errorf("PUT: %d %v", code, got)
	}
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/drill", `{"holder":"x","ttl":"1h"}`},
		{http.MethodPost, "/v1/drill", `{"ttl":"10s"}`},
		{http.MethodPost, "/v1/drill", `{"holder":"x","ttl":"-1s"}`},
		// A ttl given is never replaced by the default; 0 is outside (0s, 5m].
		{http.MethodPost, "/v1/drill", `{"holder":"x","ttl":"0s"}`},
		{http.MethodPut, "/v1/drill/" + id, `{"ttl":0}`},
		// The holder is shown: bounded, and one line of printable text.
		{http.MethodPost, "/v1/drill", `{"holder":"` + strings.Repeat("h", 513) + `"}`},
		{http.MethodPost, "/v1/drill", `{"holder":"a\nline of its own"}`},
	} {
		if code, got := call(c.method, c.path, c.body); code != http.StatusBadRequest {
			t.Errorf("%s %s %s: %d %v, want 400", c.method, c.path, c.body, code, got)
		}
	}
	if code, got := call(http.MethodDelete, "/v1/drill/"+id, ""); code != http.StatusOK || got["released"] != true {
		t.Errorf("DELETE: %d %v", code, got)
	}
	if code, _ := call(http.MethodPut, "/v1/drill/"+id, `{}`); code != http.StatusNotFound {
		t.Errorf("PUT of a released lease: %d, want 404", code)
	}
	http.DefaultClient.CloseIdleConnections()
}

// GET /v1/drill says which drill runs now, if any: its holder, since and
// expiry, never the lease's id (its holder's, to renew or let go); none
// once it is let go or has expired. There was no way to ask (405).
func TestDrillLease_GetSaysWhichDrillRuns(t *testing.T) {
	e, clock := clockedEngine(t, 1, nil)
	srv := httptest.NewServer(e.AdminHandler())
	defer srv.Close()
	get := func() map[string]any {
		t.Helper()
		resp, err := http.Get(srv.URL + "/v1/drill")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/drill: %d %v", resp.StatusCode, err)
		}
		return out
	}
	if got := get(); got["running"] != false || len(got) != 1 {
		t.Errorf("no drill: %v", got)
	}
	lease, err := e.AcquireDrill("rpcdash drill (error fault, pid 7 on box)", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := get()
	if got["running"] != true || got["holder"] != "rpcdash drill (error fault, pid 7 on box)" ||
		got["since"] != lease.Since.Format(time.RFC3339Nano) || got["expires"] != lease.Expires.Format(time.RFC3339Nano) {
		t.Errorf("a drill running: %v, lease %+v", got, lease)
	}
	if _, ok := got["id"]; ok {
		t.Errorf("the lease's id is shown: %v", got)
	}
	clock.Advance(15 * time.Second)
	if got := get(); got["running"] != false {
		t.Errorf("an expired lease: %v", got)
	}
	lease, _ = e.AcquireDrill("the console's drill", 15*time.Second)
	e.ReleaseDrill(lease.ID)
	if got := get(); got["running"] != false {
		t.Errorf("a lease let go: %v", got)
	}
}
