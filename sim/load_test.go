package sim

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLoad_ThousandConcurrentRequestsCountedExactly(t *testing.T) {
	const n = 1000
	u := start(t, Config{Latency: Latency{Median: 20 * time.Millisecond}})
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: testTimeout}

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			resp, err := c.Post(u.URL(), "application/json", strings.NewReader(requestBody("eth_blockNumber")))
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("request failed: %v", err)
	}
	got := u.Counters()
	if got.Total != n || got.HTTP != n || got.ByStatus[200] != n || got.ByMethod["eth_blockNumber"] != n {
		t.Fatalf("counters %+v", got)
	}
	if err := u.WaitIdle(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkUpstream_BlockNumber(b *testing.B) {
	u := New(Config{})
	if err := u.Start("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	defer u.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	body := requestBody("eth_blockNumber")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Post(u.URL(), "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			resp.Body.Close()
		}
	})
}

func BenchmarkHandler_Batch(b *testing.B) {
	u := New(Config{})
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 20 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0xabc","latest"]}`)
	}
	sb.WriteByte(']')
	body := sb.String()
	b.ReportAllocs()
	for b.Loop() {
		reqs, batch, _ := decodeBody([]byte(body))
		u.record(reqs)
		u.countArrival(reqs)
		_ = encodeResponses(reqs, batch, u.answer)
		u.countDeparture()
	}
}
