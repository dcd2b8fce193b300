package engine

import (
	"testing"
	"time"
)

// A pair's hold runs breaker.cooldown from the hang, and lapses, however
// often the router looks; a hang again soon after doubles it, up to
// maxHangHold cooldowns; an answer of the method, or a long quiet, starts
// it over.
func TestMethodHang_TheHoldLapsesAndDoublesWhenTheMethodHangsAgain(t *testing.T) {
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
	for range 3 {
		if h.held(t0.Add(base)) || !h.until(t0.Add(base)).IsZero() {
			t.Fatal("held past the hold")
		}
	}
	var holds []time.Duration
	at := t0.Add(base)
	for range 6 {
		h.mark(at, base) // it hung again as its hold ended
		end := h.until(at)
		holds = append(holds, end.Sub(at))
		at = end
	}
	want := []time.Duration{2 * base, 4 * base, 8 * base, 16 * base, 16 * base, 16 * base}
	for i := range want {
		if holds[i] != want[i] {
			t.Fatalf("holds %v; want %v", holds, want)
		}
	}
	h.mark(at.Add(16*base), base) // quiet for maxHangHold cooldowns past its hold
	if got := h.until(at.Add(16 * base)).Sub(at.Add(16 * base)); got != base {
		t.Fatalf("a hang long after the last hold holds %v; want breaker.cooldown %v", got, base)
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
