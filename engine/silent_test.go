package engine

import (
	"testing"
	"time"
)

// Silence lasts a breaker.cooldown at most, and any answer ends it: a
// recovered endpoint is never starved for good when no probe or exploring
// hedge reaches it.
func TestSilence_EndsAfterACooldownOrAnAnswer(t *testing.T) {
	var ep endpoint
	t0 := time.Unix(1000, 0)
	cooldown := 10 * time.Second
	if ep.silentNow(t0, cooldown) {
		t.Fatal("silent before anything happened")
	}
	ep.silentAt.Store(t0.UnixNano())
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{0, true}, {cooldown - time.Millisecond, true}, {cooldown, false}, {time.Hour, false}} {
		if got := ep.silentNow(t0.Add(c.at), cooldown); got != c.want {
			t.Errorf("%s after: silent %v, want %v", c.at, got, c.want)
		}
	}
	ep.heard(t0.Add(time.Second))
	if ep.silentNow(t0.Add(time.Second), cooldown) {
		t.Fatal("still silent after an answer")
	}
}
