package probes

import (
	"maps"
	"slices"
	"testing"
)

// exclusions records what the tracker asks the engine to do.
type exclusions struct {
	now map[string]string // endpoint → reason, wrong-chain only
	log []string
}

func (e *exclusions) Exclude(name, kind, reason string) {
	if e.now == nil {
		e.now = map[string]string{}
	}
	if _, ok := e.now[name]; !ok {
		e.log = append(e.log, "-"+name)
	}
	e.now[name] = reason
}

func (e *exclusions) Include(name, kind string) {
	if _, ok := e.now[name]; ok {
		e.log = append(e.log, "+"+name)
	}
	delete(e.now, name)
}

func evmTracker(fixed string, names ...string) (*identityTracker, *exclusions) {
	spec, _ := specFor("evm")
	ex := &exclusions{}
	return newIdentityTracker(spec, ex, names, fixed), ex
}

func TestIdentity_NoVerdictUntilEveryFirstProbeEnded(t *testing.T) {
	tr, ex := evmTracker("", "a", "b", "c")
	tr.record("a", "0x5")
	tr.firstDone("a")
	tr.record("b", "0x1")
	tr.firstDone("b")
	if len(ex.log) > 0 || tr.isSettled() {
		t.Fatalf("verdict before c's first probe ended: %v", ex.log)
	}
	tr.firstDone("c") // c's first probe failed: no answer, but it ended
	if !tr.isSettled() {
		t.Fatal("not settled after every first probe")
	}
	// 1 against 1: the lowest-indexed endpoint's answer wins the tie.
	if want := map[string]string{"b": "on chain id 0x1 (1), pool is on 0x5 (5)"}; !maps.Equal(ex.now, want) {
		t.Fatalf("exclusions %v, want %v", ex.now, want)
	}
	// c's first answer arrives late and tips the majority.
	tr.record("c", "0x1")
	if want := map[string]string{"a": "on chain id 0x5 (5), pool is on 0x1 (1)"}; !maps.Equal(ex.now, want) {
		t.Fatalf("exclusions %v, want %v", ex.now, want)
	}
	if !tr.isWrong("a") || tr.isWrong("b") {
		t.Error("isWrong disagrees with the exclusions")
	}
}

func TestIdentity_MajorityOfFirstAnswersReadmitsOnRightAnswer(t *testing.T) {
	tr, ex := evmTracker("", "a", "b", "c")
	for _, n := range []string{"a", "b", "c"} {
		id := "0x1"
		if n == "a" {
			id = "0x89"
		}
		tr.record(n, id)
		tr.firstDone(n)
	}
	if want := map[string]string{"a": "on chain id 0x89 (137), pool is on 0x1 (1)"}; !maps.Equal(ex.now, want) {
		t.Fatalf("exclusions %v, want %v", ex.now, want)
	}
	// a reconnects on the pool's chain; then b reconnects elsewhere. The
	// expectation stays the majority of first answers.
	tr.record("a", "0x1")
	tr.record("b", "0x5")
	if want := map[string]string{"b": "on chain id 0x5 (5), pool is on 0x1 (1)"}; !maps.Equal(ex.now, want) {
		t.Fatalf("exclusions %v, want %v", ex.now, want)
	}
	if want := []string{"-a", "+a", "-b"}; !slices.Equal(ex.log, want) {
		t.Fatalf("actions %v, want %v", ex.log, want)
	}
}

func TestIdentity_ConfiguredChainDecidesAtOnce(t *testing.T) {
	tr, ex := evmTracker("0x1", "a", "b")
	if !tr.isSettled() {
		t.Fatal("a configured chain needs no settling")
	}
	tr.record("a", "0x5")
	if want := map[string]string{"a": "on chain id 0x5 (5), chain.chain_id is 0x1 (1)"}; !maps.Equal(ex.now, want) {
		t.Fatalf("exclusions %v, want %v", ex.now, want)
	}
	tr.record("b", "0x5")
	if len(ex.now) != 2 {
		t.Fatalf("the majority overruled the configured chain: %v", ex.now)
	}
}
