package sim

import (
	"strings"
	"testing"
	"time"
)

func TestPreset_Personalities(t *testing.T) {
	for name, want := range map[string]Latency{
		"steady":     {Median: 40 * time.Millisecond, Sigma: 0.2},
		"heavy-tail": {Median: 50 * time.Millisecond, Sigma: 0.3, TailProb: 0.05, TailMin: 400 * time.Millisecond, TailMax: 1200 * time.Millisecond},
		"flaky":      {Median: 60 * time.Millisecond, Sigma: 0.4},
		"fast":       {},
	} {
		c, err := Preset(name)
		if err != nil || c.Latency != want || c.Name != name || c.Validate() != nil {
			t.Errorf("%s: %+v, %v", name, c, err)
		}
	}
	if c, _ := Preset("flaky"); c.ErrorRate != 0.05 || c.RateLimitRate != 0.02 {
		t.Errorf("flaky rates %v %v", c.ErrorRate, c.RateLimitRate)
	}
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "steady") {
		t.Errorf("unknown preset error %v", err)
	}
}

func TestParseURL(t *testing.T) {
	c, err := ParseURL("sim://heavy-tail?name=beta&chain=solana&head_lag=2&seed=9&median=10ms")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "beta" || c.Chain != ChainSolana || c.HeadLag != 2 || c.Seed != 9 || c.Latency.Median != 10*time.Millisecond || c.Latency.TailProb != 0.05 {
		t.Fatalf("config %+v", c)
	}
	for _, bad := range []string{"http://steady", "sim://nope", "sim://fast?colour=red", "sim://fast?head_lag=x", "sim://fast?error_rate=3"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestStartSet_StartsAllOrNone(t *testing.T) {
	ups, err := StartSet([]Config{{Name: "a"}, {Name: "b", Chain: ChainSolana}}, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = CloseAll(ups) })
	if len(ups) != 2 || ups[0].URL() == ups[1].URL() || !strings.HasPrefix(ups[0].URL(), "http://127.0.0.1:") {
		t.Fatalf("urls %q %q", ups[0].URL(), ups[1].URL())
	}
	c := newClient(t)
	call(t, c, ups[0], "eth_blockNumber")
	call(t, c, ups[1], "getSlot")

	// The second config is invalid: the first upstream must be closed again
	// (goleak in TestMain catches it otherwise).
	if ups, err := StartSet([]Config{{Name: "ok"}, {Name: "bad", Chain: "bitcoin"}}, "127.0.0.1"); err == nil || ups != nil {
		t.Fatalf("invalid set started: %v", err)
	}
}

func TestParseURL_TailAndAliases(t *testing.T) {
	c, err := ParseURL("sim://steady?latency=50ms&sigma=0.3&tail=0.02&tail_min=500ms&tail_max=1s&lag=3")
	if err != nil {
		t.Fatal(err)
	}
	want := Latency{Median: 50 * time.Millisecond, Sigma: 0.3, TailProb: 0.02, TailMin: 500 * time.Millisecond, TailMax: time.Second}
	if c.Latency != want || c.HeadLag != 3 {
		t.Fatalf("got %+v lag %d", c.Latency, c.HeadLag)
	}
	if _, err := ParseURL("sim://steady?tail=0.5&tail_min=2s&tail_max=1s"); err == nil {
		t.Fatal("inverted tail range accepted")
	}
}
