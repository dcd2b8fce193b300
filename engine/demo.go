package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// The demo load: with [demo] enabled, rpcdash sends itself a light stream
// of reads through its own RPC port (the full request path: routing,
// hedging, failover, accounting), so that a fresh clone over simulated
// upstreams shows a pool at work. It only ever targets loopback, only sends
// reads, and the console's header says "demo load N/s".

// maxDemoRate bounds demo.rate: the demo shows the pool, it does not load it.
const maxDemoRate = 200

// maxDemoInFlight bounds the demo's requests in flight; a tick past it is
// skipped (under an injected timeout the demo must not pile up).
const maxDemoInFlight = 64

// demoParams are the params the demo sends with the methods it knows;
// others get [].
var demoParams = map[string]string{
	"eth_getBalance":          `["0x00000000219ab540356cbb839cbe05303d7705fa","latest"]`,
	"eth_getTransactionCount": `["0xd8da6bf26964af9d7eed9e03e53415d37aa96045","latest"]`,
	"eth_getCode":             `["0xdac17f958d2ee523a2206206994597c13d831ec7","latest"]`,
	"eth_call":                `[{"to":"0xdac17f958d2ee523a2206206994597c13d831ec7","data":"0x70a08231000000000000000000000000d8da6bf26964af9d7eed9e03e53415d37aa96045"},"latest"]`,
	"eth_getBlockByNumber":    `["latest",false]`,
	"eth_getLogs":             `[{"fromBlock":"latest","toBlock":"latest"}]`,
	"getBalance":              `["vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg"]`,
	"getAccountInfo":          `["vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg",{"encoding":"base64"}]`,
}

var defaultDemoMix = map[string][]string{
	"evm":    {"eth_blockNumber:3", "eth_getBalance:3", "eth_call:2", "eth_getTransactionCount:1", "eth_getBlockByNumber:1"},
	"solana": {"getSlot:3", "getBalance:3", "getAccountInfo:2", "getLatestBlockhash:2"},
}

// demoMethod is one entry of the demo's mix.
type demoMethod struct {
	Method string
	Weight float64
}

// parseDemoMix reads demo.mix ("method" or "method:weight"); an empty mix is
// the default one of the chain's kind. Every method must be a read. The
// error names every bad item (errors.Join), not only the first.
func parseDemoMix(mix []string, kind string, table *jsonrpc.MethodTable) ([]demoMethod, error) {
	if len(mix) == 0 {
		return defaultMix(kind, table)
	}
	out := make([]demoMethod, 0, len(mix))
	var errs []error
	for _, item := range mix {
		m, err := parseDemoItem(item, table)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, m)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// parseDemoItem reads one item of demo.mix.
func parseDemoItem(item string, table *jsonrpc.MethodTable) (demoMethod, error) {
	name, w, hasW := strings.Cut(strings.TrimSpace(item), ":")
	m := demoMethod{Method: strings.TrimSpace(name), Weight: 1}
	if m.Method == "" {
		return m, fmt.Errorf("%s: no method name", ShowConfigValue(item))
	}
	if hasW {
		v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil || v <= 0 {
			return m, fmt.Errorf("%s: the weight after ':' must be a positive number", ShowConfigValue(item))
		}
		m.Weight = v
	}
	if c := table.Class(m.Method); c != jsonrpc.ClassRead {
		return m, fmt.Errorf("%s: the demo sends reads only; %s is a %s", ShowConfigValue(item), ShowConfigValue(m.Method), c)
	}
	return m, nil
}

// defaultMix is the default mix of chain.kind without the methods [methods]
// moved out of the reads: the user never chose them, so reclassifying one
// (methods.writes = ["eth_blockNumber"]) drops it from the demo rather than
// failing start-up. Only when none is left is it an error.
func defaultMix(kind string, table *jsonrpc.MethodTable) ([]demoMethod, error) {
	var reads []string
	for _, item := range defaultDemoMix[kind] {
		if name, _, _ := strings.Cut(item, ":"); table.Class(name) == jsonrpc.ClassRead {
			reads = append(reads, item)
		}
	}
	if len(reads) == 0 && len(defaultDemoMix[kind]) > 0 { // (an unknown chain.kind is reported as such)
		return nil, fmt.Errorf("[methods] reclassifies every read of the default mix (%s): set demo.mix to reads to send", strings.Join(defaultDemoMix[kind], ", "))
	}
	return parseDemoMix(reads, kind, table)
}

// demoLoad is the running demo.
type demoLoad struct {
	cancel context.CancelFunc
	ticks  sync.WaitGroup // the scheduler
	sends  sync.WaitGroup // requests in flight
	client *http.Client
}

// startDemo begins the demo against the bound RPC listener, if [demo] is
// on and the listener can be reached on loopback.
func (e *Engine) startDemo() {
	if !e.cfg.Demo.Enabled {
		return
	}
	target, err := loopbackTarget(e.rpcLn.Addr())
	if err != nil {
		e.log.Warn("demo load not started", "reason", err.Error())
		return
	}
	mix, err := parseDemoMix(e.cfg.Demo.Mix, e.cfg.Chain.Kind, e.methods)
	if err != nil || len(mix) == 0 {
		return // Validate has said so already
	}
	bodies := make([][]byte, len(mix))
	total := 0.0
	for i, m := range mix {
		params := demoParams[m.Method]
		if params == "" {
			params = "[]"
		}
		bodies[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, m.Method, params)
		total += m.Weight
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &demoLoad{cancel: cancel, client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: maxDemoInFlight}}}
	e.demo = d
	e.demoOn.Store(true)
	every := time.Duration(float64(time.Second) / e.cfg.Demo.Rate)
	inflight := make(chan struct{}, maxDemoInFlight)
	d.ticks.Add(1)
	go func() {
		defer d.ticks.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			select {
			case inflight <- struct{}{}:
			default:
				continue // the demo never piles up behind a hung pool
			}
			body := bodies[pickWeighted(mix, total)]
			d.sends.Add(1)
			go func() {
				defer d.sends.Done()
				defer func() { <-inflight }()
				d.send(target, body, e.cfg.Server.RequestTimeout)
			}()
		}
	}()
	e.log.Info("demo load started", "rate", e.cfg.Demo.Rate, "target", target)
}

// demoStatus is what the Snapshot says of the demo: on only while it runs.
func (e *Engine) demoStatus() DemoStatus {
	if !e.demoOn.Load() {
		return DemoStatus{}
	}
	return DemoStatus{Enabled: true, Rate: e.cfg.Demo.Rate}
}

func pickWeighted(mix []demoMethod, total float64) int {
	x := rand.Float64() * total
	for i, m := range mix {
		if x < m.Weight {
			return i
		}
		x -= m.Weight
	}
	return len(mix) - 1
}

// send posts one request and reads the answer; the request's own deadline
// bounds it, not the demo's: a stopping demo lets its requests finish.
func (d *demoLoad) send(target string, body []byte, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// stopScheduling ends the demo's schedule; requests in flight go on.
// (The caller clears Engine.demoOn.)
func (d *demoLoad) stopScheduling() {
	d.cancel()
	d.ticks.Wait()
}

// wait returns when the demo's requests have ended.
func (d *demoLoad) wait() {
	d.sends.Wait()
	d.client.CloseIdleConnections()
}

// loopbackTarget is the URL of addr reached over loopback: a wildcard
// listener is reached on 127.0.0.1 (or ::1); any other non-loopback address
// is refused, since the demo sends traffic to loopback only.
func loopbackTarget(addr net.Addr) (string, error) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "", fmt.Errorf("listener %s is not TCP", addr)
	}
	ip := tcp.IP
	switch {
	case ip.IsLoopback():
	case ip.IsUnspecified() && ip.To4() != nil:
		ip = net.IPv4(127, 0, 0, 1)
	case ip.IsUnspecified():
		ip = net.IPv6loopback
	default:
		return "", fmt.Errorf("server.listen %s is not reachable on loopback; the demo sends to loopback only", addr)
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port)) + "/", nil
}
