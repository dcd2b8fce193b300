package engine_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// A request still running when shutdown_timeout passes is answered with a
// JSON-RPC error saying rpcdash is shutting down, not a dropped connection.
func TestShutdown_CutRequestsAreAnswered(t *testing.T) {
	cfg := baseConfig()
	u := sim.New(sim.Config{Latency: fixed(0)})
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	u.SetMode(sim.ModeHang)
	cfg.Endpoints = []engine.EndpointConfig{{Name: "a", URL: u.URL()}}
	eng, err := engine.New(cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	replies := make([]reply, 3)
	errs := make([]error, 3)
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + addr + `","latest"]}`,
		`{"jsonrpc":"2.0","id":2,"method":"eth_sendRawTransaction","params":["0x01"]}`,
		`[{"jsonrpc":"2.0","id":3,"method":"eth_chainId"},{"jsonrpc":"2.0","id":4,"method":"eth_getBalance","params":["` + addr + `","latest"]}]`,
	}
	for i, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Post("http://"+eng.RPCAddr(), "application/json", strings.NewReader(b))
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			replies[i].status = resp.StatusCode
			replies[i].body, errs[i] = io.ReadAll(resp.Body)
		}()
	}
	testutil.WaitUntil(t, 5*time.Second, "four requests hanging upstream", func() bool { return u.Counters().Hanging == 4 })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	if err := eng.Shutdown(ctx); err == nil || !strings.Contains(err.Error(), "cut") {
		t.Errorf("shutdown error %v, want one saying requests were cut", err)
	}
	if took := time.Since(began); took > 200*time.Millisecond+2*time.Second {
		t.Errorf("shutdown took %s for a 200ms bound", took)
	}
	wg.Wait()
	for i, r := range replies {
		if errs[i] != nil {
			t.Errorf("request %d: %v, want an answer", i, errs[i])
			continue
		}
		if r.status != 200 || strings.Count(string(r.body), "rpcdash is shutting down") != strings.Count(bodies[i], `"id"`) ||
			!strings.Contains(string(r.body), `"code":-32000`) {
			t.Errorf("request %d: HTTP %d %s; want every element answered that rpcdash is shutting down", i, r.status, r.body)
		}
	}
}
