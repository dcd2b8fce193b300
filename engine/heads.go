package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// headTracker knows the pool's highest head and how fast it advances.
// Each endpoint's own head lives on the endpoint; lag is the difference,
// corrected for when each was seen (see lagOf).
type headTracker struct {
	max   atomic.Int64
	maxAt atomic.Int64 // unix nanos when max was seen

	mu    sync.Mutex
	marks []headMark    // (time, max) samples over the last rateSpan
	rate  atomic.Uint64 // blocks per second, float64 bits
}

type headMark struct {
	at   int64
	head int64
}

// rateSpan is how far back the chain's pace is measured.
const rateSpan = int64(2 * time.Minute)

// observe raises the pool's head to v (seen at now) and says whether it rose.
func (h *headTracker) observe(v int64, now int64) bool {
	for {
		cur := h.max.Load()
		if v <= cur {
			return false
		}
		if h.max.CompareAndSwap(cur, v) {
			h.maxAt.Store(now)
			h.mark(v, now)
			return true
		}
	}
}

func (h *headTracker) mark(v, now int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.marks = append(h.marks, headMark{now, v})
	for len(h.marks) > 2 && (now-h.marks[0].at > rateSpan || len(h.marks) > 256) {
		h.marks = h.marks[1:]
	}
	first := h.marks[0]
	if dt := now - first.at; dt >= int64(time.Second) && len(h.marks) >= 3 {
		r := float64(v-first.head) / (float64(dt) / float64(time.Second))
		h.rate.Store(math.Float64bits(r))
	}
}

func (h *headTracker) blocksPerSecond() float64 { return math.Float64frombits(h.rate.Load()) }

// observeHead records a head height seen for an endpoint (by a probe or in
// a passive answer), then applies the lag rule to it; probe says whether
// this observation counts towards readmission.
func (e *Engine) observeHead(ep *endpoint, head int64, probe bool) {
	if head <= 0 || ep.excluded(ExcludeWrongChain) {
		// Another chain's height says nothing about this one's; a probe
		// still re-checks the lag.
		if probe {
			e.evaluateLag(ep, true)
		}
		return
	}
	if f := ep.fault.Load(); f != nil && f.Mode == FaultStale {
		if frozen := ep.staleHead.Load(); frozen > 0 {
			head = frozen
		}
	}
	now := e.now().UnixNano()
	ep.head.Store(head)
	ep.headAt.Store(now)
	if e.heads.observe(head, now) {
		for _, other := range e.endpoints {
			if other != ep {
				e.evaluateLag(other, false)
			}
		}
	}
	e.evaluateLag(ep, probe)
}

// lagOf is how far ep's head is behind the pool's highest (0 when unknown).
// Heads are seen at different moments (a probe every few seconds, a passive
// answer now): ep's head is carried forward at the chain's measured pace to
// the moment the highest head was seen, so an endpoint probed a while ago is
// not taken for one that fell behind. A head that stopped advancing is seen
// again by the next probe, at its old height, and its lag shows.
func (e *Engine) lagOf(ep *endpoint) int64 {
	h := ep.head.Load()
	if h == 0 {
		return 0
	}
	top := e.heads.max.Load()
	if gap := e.heads.maxAt.Load() - ep.headAt.Load(); gap > 0 {
		// Every block the chain may have made since is credited (ceil): a
		// block boundary between the two sightings is not lag, and counting
		// it showed healthy endpoints one block behind on every other tick.
		// Lag is what is proven; a frozen head still shows at its next probe.
		h += int64(math.Ceil(e.heads.blocksPerSecond() * float64(gap) / float64(time.Second)))
	}
	return max(top-h, 0)
}

func trimHex(s string) string {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:]
	}
	return s
}

// freezeHead makes a stale-faulted endpoint's head answers stop advancing:
// the first head it reports after the fault is the one it keeps reporting.
func (e *Engine) freezeHead(ep *endpoint, method string, r *upstreamReply) {
	if r.head <= 0 {
		return
	}
	ep.staleHead.CompareAndSwap(0, r.head)
	if frozen := ep.staleHead.Load(); frozen < r.head {
		replaceHeadResult(r.body, method, frozen)
		r.info = jsonrpc.InspectResponse(r.body.Bytes())
		r.head = frozen
	}
}

// headOf reads the head an eth_blockNumber or getSlot answer carries.
func headOf(method string, body []byte) (int64, bool) {
	switch method {
	case "eth_blockNumber":
		s, ok := jsonrpc.ResultString(body)
		if !ok {
			return 0, false
		}
		v, err := strconv.ParseInt(trimHex(s), 16, 64)
		return v, err == nil
	case "getSlot":
		v, ok := jsonrpc.ResultUint64(body)
		return int64(v), ok
	}
	return 0, false
}

// replaceHeadResult rewrites a head answer in place to carry v, keeping its id.
func replaceHeadResult(body *bytes.Buffer, method string, v int64) {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body.Bytes(), &msg) != nil {
		return
	}
	var res []byte
	if method == "getSlot" {
		res = strconv.AppendInt(nil, v, 10)
	} else {
		res = strconv.AppendQuote(nil, "0x"+strconv.FormatInt(v, 16))
	}
	body.Reset()
	body.WriteString(`{"jsonrpc":"2.0","id":`)
	if msg.ID == nil {
		body.WriteString("null")
	}
	body.Write(msg.ID)
	body.WriteString(`,"result":`)
	body.Write(res)
	body.WriteString("}")
}

// monotonicHead keeps the chain from going backwards for clients: a head
// answer below one rpcdash already returned (another endpoint a block or
// two behind) is raised to it. An answer further behind than
// chain.max_head_lag is not papered over; it passes as it came.
func (e *Engine) monotonicHead(method string, body *bytes.Buffer, v int64) {
	for {
		served := e.servedHead.Load()
		if v >= served {
			if e.servedHead.CompareAndSwap(served, v) {
				return
			}
			continue
		}
		if served-v <= e.cfg.Chain.MaxHeadLag {
			replaceHeadResult(body, method, served)
		}
		return
	}
}

// forgetHead drops ep's head (it turned out to be on another chain) and
// recomputes the pool's highest head from the others.
func (e *Engine) forgetHead(ep *endpoint) {
	ep.head.Store(0)
	var top int64
	for _, o := range e.endpoints {
		top = max(top, o.head.Load())
	}
	e.heads.max.Store(top)
}
