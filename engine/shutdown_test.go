package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
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
// What the answer advises depends on whether sending it again is safe. A
// read, or a request that never left: "send it again", with -32603, which
// viem retries (rpcdash restarted, or another instance, answers it). A
// request sent once (a write, a method in no table, a filter call) that
// reached an endpoint may have been carried out there: the answer said
// "send it again" too, an invitation to send a transaction twice; now it
// says to check first, with -32000, which viem never retries.
func TestShutdown_CutRequestsAreAnswered(t *testing.T) {
	t.Parallel()
	cfg := baseConfig()
	u := sim.New(sim.Config{Latency: fixed(0)})
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer u.Close()
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
	post := func(body string) (reply, error) {
		resp, err := client.Post("http://"+eng.RPCAddr(), "application/json", strings.NewReader(body))
		if err != nil {
			return reply{}, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return reply{status: resp.StatusCode, body: b}, err
	}
	created, err := post(`{"jsonrpc":"2.0","id":9,"method":"eth_newBlockFilter","params":[]}`)
	var filter struct{ Result string }
	if err != nil || json.Unmarshal(created.body, &filter) != nil || filter.Result == "" {
		t.Fatalf("creating a filter: %v %s", err, created.body)
	}
	u.SetMode(sim.ModeHang)

	const (
		again   = "cut at server.shutdown_timeout; send it again"
		unsent  = "before it was sent to any endpoint; send it again"
		checkTx = "after it was sent to a, which may have carried it out: check before sending it again (look a transaction up by its hash"
		checkFi = "after it was sent to a, which may have carried it out (created the filter, taken its changes or uninstalled it)"
	)
	type want struct {
		code int
		text string
	}
	tx := func(id int, method, raw string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":[%q]}`, id, method, raw)
	}
	cases := []struct {
		body string
		want []want
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + addr + `","latest"]}`, []want{{-32603, again}}},
		{tx(2, "eth_sendRawTransaction", "0x01"), []want{{-32000, checkTx}}},
		{`[{"jsonrpc":"2.0","id":3,"method":"eth_chainId"},{"jsonrpc":"2.0","id":4,"method":"eth_getBalance","params":["` + addr + `","latest"]}]`,
			[]want{{-32603, again}, {-32603, again}}},
		{tx(5, "mev_sendBundle", "0x05"), []want{{-32000, checkTx}}}, // in no table: sent once
		// The second write waits for the first (write affinity): never sent.
		{"[" + tx(6, "eth_sendRawTransaction", "0x06") + "," + tx(7, "eth_sendRawTransaction", "0x07") + "]",
			[]want{{-32000, checkTx}, {-32603, unsent}}},
		{tx(8, "eth_getFilterChanges", filter.Result), []want{{-32000, checkFi}}},
	}
	var wg sync.WaitGroup
	replies := make([]reply, len(cases))
	errs := make([]error, len(cases))
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i], errs[i] = post(c.body)
		}()
	}
	// Six upstream requests: the read batch's two calls go up as one batch,
	// never cut on the only endpoint.
	testutil.WaitUntil(t, 5*time.Second, "six requests hanging upstream", func() bool { return u.Counters().Hanging == 6 })
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
		var got []struct {
			Error struct {
				Code    int
				Message string
			}
		}
		b := r.body
		if !strings.HasPrefix(cases[i].body, "[") {
			b = append(append([]byte("["), b...), ']')
		}
		if r.status != 200 || json.Unmarshal(b, &got) != nil || len(got) != len(cases[i].want) {
			t.Errorf("request %d: HTTP %d %s; want %d answers", i, r.status, r.body, len(cases[i].want))
			continue
		}
		for j, w := range cases[i].want {
			e := got[j].Error
			if e.Code != w.code || !strings.HasPrefix(e.Message, "rpcdash is shutting down") || !strings.Contains(e.Message, w.text) {
				t.Errorf("request %d, element %d: %d %q; want %d saying %q", i, j, e.Code, e.Message, w.code, w.text)
			}
		}
	}
	if n := u.MethodCount("eth_sendRawTransaction"); n != 2 {
		t.Errorf("the endpoint saw %d writes, want 2 (the batch's second never left)", n)
	}
}
