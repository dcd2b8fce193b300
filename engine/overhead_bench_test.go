package engine_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The overhead benchmarks send one eth_blockNumber at a time, over one
// shared keep-alive client, to a zero-latency sim upstream: straight
// (Direct), through a bare httputil.ReverseProxy, and through the engine
// with hedging off. ns/op is a round trip; allocs count the whole process
// (client, proxy and sim), so only the differences are the proxies'. Run
//
//	go test -run XXX -bench Proxy -benchmem -count 5 ./engine/

const overheadCall = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`

func zeroLatencySim(b *testing.B) *sim.Upstream {
	u := sim.New(sim.Config{Name: "zero", Seed: 1})
	if err := u.Start("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { u.Close() })
	return u
}

func overheadClient(b *testing.B) *http.Client {
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func benchRoundTrips(b *testing.B, c *http.Client, target string) {
	benchPosts(b, c, target, overheadCall)
}

// benchPosts posts body to target over c, one at a time, for b.N rounds.
func benchPosts(b *testing.B, c *http.Client, target, body string) {
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Post(target, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("HTTP %d, %v", resp.StatusCode, err)
		}
	}
}

func BenchmarkProxy_Direct(b *testing.B) {
	u := zeroLatencySim(b)
	benchRoundTrips(b, overheadClient(b), u.URL())
}

func BenchmarkProxy_ReverseProxy(b *testing.B) {
	u := zeroLatencySim(b)
	target, err := url.Parse(u.URL())
	if err != nil {
		b.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256}
	rp.Transport = tr
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(ln) }()
	b.Cleanup(func() {
		srv.Close()
		<-served
		tr.CloseIdleConnections()
	})
	benchRoundTrips(b, overheadClient(b), "http://"+ln.Addr().String())
}

func BenchmarkProxy_Engine(b *testing.B) { benchEngine(b, nil) }

// BenchmarkProxy_EngineTraceOff is BenchmarkProxy_Engine with request
// traces off (server.trace_requests = 0): side by side, the traces' cost.
func BenchmarkProxy_EngineTraceOff(b *testing.B) {
	benchEngine(b, func(c *engine.Config) { c.Server.TraceRequests = 0 })
}

func benchEngine(b *testing.B, mut func(*engine.Config)) {
	u := zeroLatencySim(b)
	cfg := engine.Default()
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Server.Admin = "127.0.0.1:0"
	cfg.Hedge.Enabled = false
	cfg.Endpoints = []engine.EndpointConfig{{Name: "zero", URL: u.URL()}}
	if mut != nil {
		mut(&cfg)
	}
	eng, err := engine.New(cfg, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := eng.Close(); err != nil {
			b.Errorf("engine close: %v", err)
		}
	})
	benchRoundTrips(b, overheadClient(b), "http://"+eng.RPCAddr())
}
