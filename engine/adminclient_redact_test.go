package engine_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An admin URL may carry a key in its path (behind a proxy that routes by
// it). Neither Go's error, which repeats the URL asked for, nor the admin
// API's 404, which repeats the path, may show it: bench --admin and the
// drill printed "Get \"http://127.0.0.1:1/KEY/v1/status\"" and "no such
// admin call: GET /KEY/v1/status".
func TestAdminClient_AKeyInTheBaseURLIsNeverShown(t *testing.T) {
	const key = "SECRETKEY123"
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // nothing answers there
	for _, base := range []string{h.admin + "/v3/" + key, closed + "/v3/" + key, h.admin + "/v3/" + key + "?apikey=" + key} {
		c := engine.AdminClient{Base: base}
		err := c.Do(context.Background(), http.MethodGet, "/v1/status", nil, nil)
		if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "REDACTED") {
			t.Errorf("%s: %v: want a failure with the key REDACTED", engine.ShownURL(base), err)
		}
	}
}

// The admin call's own path is not a secret and is shown whole when the
// instance cannot be reached: a drill whose instance died read
// `Get "http://127.0.0.1:8546/REDACTED"`, as if a key had been there.
func TestAdminClient_TheCallsOwnPathIsShown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // nothing answers there
	err = engine.AdminClient{Base: closed}.Do(context.Background(), http.MethodGet, "/v1/status", nil, nil)
	if err == nil || !strings.Contains(err.Error(), closed+"/v1/status") || strings.Contains(err.Error(), "REDACTED") {
		t.Fatalf("%v: want the failure to name %s/v1/status", err, closed)
	}
}
