package engine

import (
	"strings"
	"testing"
	"time"
)

func TestFilters_TableExpiresUnpolledFilters(t *testing.T) {
	now := time.Unix(1000, 0)
	f := newFilterTable(func() time.Time { return now })
	a, b := &endpoint{}, &endpoint{}
	polled := f.pin(a, "0x1")
	idle := f.pin(b, "0x1")
	if polled == idle || !strings.HasPrefix(polled, "0x") {
		t.Fatalf("ids %q %q", polled, idle)
	}
	now = now.Add(filterTTL - time.Second)
	if ep, up, ok := f.lookup(polled); !ok || ep != a || up != "0x1" {
		t.Fatalf("lookup: %v %q %v", ep == a, up, ok)
	}
	now = now.Add(2 * time.Second)
	if _, _, ok := f.lookup(idle); ok {
		t.Fatal("a filter unpolled for filterTTL is still tracked")
	}
	if _, _, ok := f.lookup(polled); !ok {
		t.Fatal("a filter polled within filterTTL was dropped")
	}
	if n := f.len(); n != 1 {
		t.Fatalf("%d filters tracked, want 1", n)
	}
}

func TestFilters_TableBoundedUnderAFlood(t *testing.T) {
	now := time.Unix(1000, 0)
	f := newFilterTable(func() time.Time { return now })
	ep := &endpoint{}
	kept := f.pin(ep, "0xkept")
	for i := 0; i < 3*maxFilters; i++ {
		if i%1000 == 0 {
			f.lookup(kept) // a client that keeps polling keeps its filter
		}
		f.pin(ep, "0x2")
	}
	if n := f.len(); n != maxFilters {
		t.Fatalf("%d filters tracked after a flood, want the bound %d", n, maxFilters)
	}
	if _, _, ok := f.lookup(kept); !ok {
		t.Fatal("the most recently polled filter was evicted by the flood")
	}
}
