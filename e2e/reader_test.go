package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// reader is a steady client: it calls eth_chainId through go-ethereum's
// client in a loop, bounded in count and time, and keeps who answered.
type reader struct {
	c    *client
	quit chan struct{}
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	answers []answer
	errs    []error
}

type answer struct {
	endpoint string
	attempts string
}

const (
	maxReads  = 5000
	readPause = 10 * time.Millisecond // a steady client, not a load test
)

func startReader(t *testing.T, url string) *reader {
	rd := &reader{c: dial(t, url), quit: make(chan struct{}), done: make(chan struct{})}
	go rd.loop()
	t.Cleanup(rd.stop)
	return rd
}

func (rd *reader) loop() {
	defer close(rd.done)
	for range maxReads {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		id, err := rd.c.eth.ChainID(ctx)
		cancel()
		hs := rd.c.rec.take()
		rd.mu.Lock()
		switch {
		case err != nil:
			rd.errs = append(rd.errs, err)
		case id.Int64() != 1337:
			rd.errs = append(rd.errs, fmt.Errorf("chain id %s, want 1337", id))
		case len(hs) != 1:
			rd.errs = append(rd.errs, fmt.Errorf("%d HTTP answers for one call", len(hs)))
		default:
			rd.answers = append(rd.answers, answer{hs[0].Get("X-Rpcdash-Endpoint"), hs[0].Get("X-Rpcdash-Attempts")})
		}
		rd.mu.Unlock()
		select {
		case <-rd.quit:
			return
		case <-time.After(readPause):
		}
	}
}

// stop ends the loop and waits for it.
func (rd *reader) stop() {
	rd.once.Do(func() { close(rd.quit) })
	<-rd.done
}

// mark is the number of answers so far: the index of the next one.
func (rd *reader) mark() int {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return len(rd.answers)
}

func (rd *reader) errors() []error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return append([]error(nil), rd.errs...)
}

// countBetween counts answers[from:to] from endpoint; to < 0 means all.
func (rd *reader) countBetween(from, to int, endpoint string) int {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if to < 0 || to > len(rd.answers) {
		to = len(rd.answers)
	}
	n := 0
	for i := from; i < to; i++ {
		if rd.answers[i].endpoint == endpoint {
			n++
		}
	}
	return n
}

func (rd *reader) byEndpoint() map[string]int {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	m := map[string]int{}
	for _, a := range rd.answers {
		m[a.endpoint]++
	}
	return m
}

func (rd *reader) failedOver() int {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	n := 0
	for _, a := range rd.answers {
		if a.attempts != "1" {
			n++
		}
	}
	return n
}

// waitAnswers waits until endpoint has answered n reads from answer index
// from on; it fails at once if the reader has stopped.
func (rd *reader) waitAnswers(t *testing.T, endpoint string, from, n int) {
	t.Helper()
	testutil.WaitUntil(t, 30*time.Second, fmt.Sprintf("%d reads answered by %s", n, endpoint), func() bool {
		select {
		case <-rd.done:
			t.Fatalf("reader stopped early; errors: %v", rd.errors())
		default:
		}
		return rd.countBetween(from, -1, endpoint) >= n
	})
}
