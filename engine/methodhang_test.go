package engine

import (
	"testing"
	"time"
)

// A pair's hold runs breaker.cooldown from the hang, then lets one call
// through; that call hanging too doubles the hold, up to maxHangHold
// cooldowns; an answer of the method ends it.
func TestMethodHang_TheHoldLetsOneCallThroughAndDoublesWhenItHangsToo(t *testing.T) {
	var h methodHang
	base := 10 * time.Second
	t0 := time.Unix(1000, 0)
	if h.held(t0) {
		t.Fatal("held before any hang")
	}
	h.mark(t0, base)
	h.mark(t0.Add(time.Second), base) // another attempt meeting the same hang
	if got := h.until(t0); !got.Equal(t0.Add(base)) {
		t.Fatalf("until %v; want %v (one hold from the first hang)", got, t0.Add(base))
	}
	if !h.held(t0.Add(base - time.Millisecond)) {
		t.Fatal("not held within the hold")
	}
	t1 := t0.Add(base)
	if h.held(t1) {
		t.Fatal("the first call past the hold was held; want it let through")
	}
	if !h.held(t1) {
		t.Fatal("a second call past the hold was let through beside the first")
	}
	holds := []time.Duration{}
	at := t1
	for range 6 {
		h.mark(at, base) // the call let through hung too
		end := h.until(at)
		holds = append(holds, end.Sub(at))
		at = end
		if h.held(at) {
			t.Fatalf("the first call past a hold of %v was held", holds[len(holds)-1])
		}
	}
	want := []time.Duration{2 * base, 4 * base, 8 * base, 16 * base, 16 * base, 16 * base}
	for i := range want {
		if holds[i] != want[i] {
			t.Fatalf("holds %v; want %v", holds, want)
		}
	}
	h.clear()
	if h.held(at) || !h.until(at).IsZero() {
		t.Fatal("held after the method was answered")
	}
	h.mark(at, base)
	if got := h.until(at).Sub(at); got != base {
		t.Fatalf("a hang after an answer holds %v; want breaker.cooldown %v", got, base)
	}
}
