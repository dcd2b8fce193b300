package engine

import (
	"fmt"
	"sync"
	"testing"
)

func TestPerMethod_BoundedWithOrWithoutASharedEntry(t *testing.T) {
	created := 0
	shared := newPerMethod(true, func(m string) *string { created++; return &m })
	none := newPerMethod(false, func(m string) *string { return &m })
	for i := range maxTrackedMethods {
		m := fmt.Sprintf("m%d", i)
		a, _ := shared.get(m)
		if b, _ := shared.get(m); a != b || *a != m {
			t.Fatalf("%s: a second get made another entry", m)
		}
		none.get(m)
	}
	past, ok := shared.get("m_past_the_cap")
	if !ok || *past != otherMethod {
		t.Fatalf("past the cap: %v %v, want the shared %q entry", past, ok, otherMethod)
	}
	if again, _ := shared.get("another_past"); again != past {
		t.Error("methods past the cap do not share one entry")
	}
	if _, ok := none.get("m_past_the_cap"); ok {
		t.Error("a map without a shared entry gave a method past the cap one")
	}
	if created != maxTrackedMethods+1 || len(shared.all()) != maxTrackedMethods+1 {
		t.Errorf("created %d entries, all() has %d, want %d", created, len(shared.all()), maxTrackedMethods+1)
	}
	if _, ok := shared.lookup("never_seen"); ok || len(shared.all()) != maxTrackedMethods+1 {
		t.Error("lookup created an entry")
	}
}

func TestPerMethod_ConcurrentFirstUseMakesOneEntry(t *testing.T) {
	var mu sync.Mutex
	created := 0
	p := newPerMethod(true, func(string) *int { mu.Lock(); created++; mu.Unlock(); return new(int) })
	var wg sync.WaitGroup
	got := make([]*int, 16)
	for i := range got {
		wg.Go(func() { got[i], _ = p.get("eth_call") })
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("concurrent first gets returned different entries")
		}
	}
	if created != 1 {
		t.Errorf("created %d entries, want 1", created)
	}
}
