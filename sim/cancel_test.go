package sim

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sendAsync posts body with ctx in the background; the returned channel
// gets the outcome.
func sendAsync(ctx context.Context, c *http.Client, url, body string) <-chan error {
	done := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			done <- err
			return
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	return done
}

func TestCancel_DuringLatencyIsCountedAtOnce(t *testing.T) {
	u := start(t, Config{Latency: Latency{Median: time.Hour}})
	c := newClient(t)
	wait := waitCtx(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := sendAsync(ctx, c, u.URL(), requestBody("eth_blockNumber"))
	if err := u.WaitMethod(wait, "eth_blockNumber", 1); err != nil {
		t.Fatalf("request never arrived: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client error %v, want context.Canceled", err)
	}
	if err := u.WaitCancelled(wait, 1); err != nil {
		t.Fatalf("cancellation not counted: %v", err)
	}
	if err := u.WaitIdle(wait); err != nil {
		t.Fatalf("handler did not finish: %v", err)
	}
	got := u.Counters()
	if got.Cancelled != 1 || got.Total != 1 || got.HTTP != 1 || len(got.ByStatus) != 0 {
		t.Fatalf("counters %+v", got)
	}
}

func TestHang_CancelIsCounted(t *testing.T) {
	u := start(t, Config{})
	u.SetMode(ModeHang)
	c := newClient(t)
	wait := waitCtx(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := sendAsync(ctx, c, u.URL(), requestBody("eth_chainId"))
	if err := u.WaitFor(wait, func(c Counters) bool { return c.Hanging == 1 }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("hung request answered: %v", err)
	default:
	}
	cancel()
	<-done
	if err := u.WaitFor(wait, func(c Counters) bool { return c.Cancelled == 1 && c.InFlight == 0 && c.Hanging == 0 }); err != nil {
		t.Fatalf("counters %+v: %v", u.Counters(), err)
	}
	if got := u.Counters(); len(got.ByStatus) != 0 {
		t.Fatalf("hung request counted a status: %+v", got.ByStatus)
	}
}

func TestClose_ReleasesHungAndSleepingHandlers(t *testing.T) {
	u := New(Config{})
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	wait := waitCtx(t)

	u.SetMode(ModeHang)
	hung := sendAsync(context.Background(), c, u.URL(), requestBody("eth_chainId"))
	if err := u.WaitMethod(wait, "eth_chainId", 1); err != nil {
		t.Fatal(err)
	}
	u.SetMode(ModeNormal)
	u.SetExtraLatency(time.Hour)
	sleeping := sendAsync(context.Background(), c, u.URL(), requestBody("eth_blockNumber"))
	if err := u.WaitMethod(wait, "eth_blockNumber", 1); err != nil {
		t.Fatal(err)
	}

	if err := u.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if got := u.Counters(); got.InFlight != 0 || got.Cancelled != 0 {
		t.Fatalf("after close: %+v", got)
	}
	for name, ch := range map[string]<-chan error{"hung": hung, "sleeping": sleeping} {
		if err := <-ch; err == nil {
			t.Errorf("%s request got an answer from a closed upstream", name)
		}
	}
	if err := u.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestWaitFor_ReturnsContextError(t *testing.T) {
	u := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := u.WaitFor(ctx, func(c Counters) bool { return c.Total > 0 }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
