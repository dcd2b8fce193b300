package sim

import (
	"context"
	"testing"
	"time"
)

// A batch whose client went away is one cancelled HTTP request carrying
// its calls: cancelled counts the request, cancelled_calls its calls, as
// total counts them, so that waste set beside upstream calls (bench's
// wasted beside its upstream column) is in the same unit.
func TestCancel_ABatchCountsItsCalls(t *testing.T) {
	u := start(t, Config{Latency: Latency{Median: time.Hour}})
	c := newClient(t)
	wait := waitCtx(t)

	ctx, cancel := context.WithCancel(context.Background())
	batch := `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_chainId"},{"jsonrpc":"2.0","id":3,"method":"eth_chainId"}]`
	done := sendAsync(ctx, c, u.URL(), batch)
	if err := u.WaitMethod(wait, "eth_chainId", 3); err != nil {
		t.Fatalf("the batch never arrived: %v", err)
	}
	cancel()
	if err := u.WaitCancelled(wait, 1); err != nil {
		t.Fatalf("cancellation not counted: %v", err)
	}
	<-done
	if got := u.Counters(); got.Total != 3 || got.Cancelled != 1 || got.CancelledCalls != 3 {
		t.Errorf("total %d, cancelled %d, cancelled_calls %d; want 3 calls in 1 cancelled request", got.Total, got.Cancelled, got.CancelledCalls)
	}
}
