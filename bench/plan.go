package bench

import (
	"encoding/json"
	"math/rand/v2"
	"time"
)

// op is one scheduled operation of a row: K calls sent together.
type op struct {
	at      time.Duration // from the row's origin, warm-up included
	warm    bool          // before the measured span
	control bool          // sent as the control tenant
	calls   []call
}

type call struct {
	method string
	url    string
	body   []byte
}

// plan lays out one row: the arrivals of the warm-up and the measured span
// as one continuous schedule, each operation's tenant, and each call's
// method and params. The seed fixes everything but the params' ids, which
// row keeps unique across the rows of a run.
func (l Load) plan() ([]op, error) {
	w := l.Workload
	total, count := w.Warmup+w.Measured(), 0
	warmCount := 0
	if w.Count > 0 {
		warmCount = int(w.Warmup.Seconds() * w.Rate)
		count = warmCount + w.Count
		total = time.Duration(1 << 62) // the count bounds the schedule
	}
	offsets, err := Schedule(w.Arrivals, w.Rate, total, count, w.Seed)
	if err != nil {
		return nil, err
	}
	methods := map[string][]byte{}
	for _, e := range w.Mix {
		methods[e.Method], _ = json.Marshal(e.Method)
	}
	r := rand.New(rand.NewPCG(uint64(w.Seed), 0x6d6978)) // tenants and methods
	ops := make([]op, len(offsets))
	seq, controls := 0, 0
	for i, at := range offsets {
		o := op{at: at, warm: at < w.Warmup}
		if w.Count > 0 {
			o.warm = i < warmCount
		}
		url := l.URL
		if w.ControlShare > 0 && r.Float64() < w.ControlShare && len(l.ControlURLs) > 0 {
			o.control = true
			url = l.ControlURLs[controls%len(l.ControlURLs)]
			controls++
		}
		o.calls = make([]call, w.Fanout.calls())
		for k := range o.calls {
			m := w.Mix.pick(r.Float64())
			params := l.Params
			if params == nil {
				params, _ = uniqueParams(m, w.Seed, uint64(l.Row)<<32|uint64(seq))
			}
			o.calls[k] = call{method: m, url: url, body: requestBody(seq, methods[m], params)}
			seq++
		}
		ops[i] = o
	}
	return ops, nil
}
