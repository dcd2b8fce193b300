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
	polled, _ := f.pin(a, "0x1")
	idle, _ := f.pin(b, "0x1")
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
	kept, _ := f.pin(ep, "0xkept")
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

// A full table makes room for a new filter only from one unpolled for
// filterRoomAfter, or never polled for unpolledRoomAfter; until then the
// creation is refused (hasRoom).
func TestFilters_AFullTableMakesRoomOnlyFromFiltersUnpolledForAMinute(t *testing.T) {
	now := time.Unix(1000, 0)
	f := newFilterTable(func() time.Time { return now })
	f.max = 3
	ep := &endpoint{}
	var ids []string
	for _, up := range []string{"0x1", "0x2", "0x3"} {
		id, _ := f.pin(ep, up)
		f.lookup(id) // each polled once
		ids = append(ids, id)
	}
	now = now.Add(30 * time.Second)
	f.lookup(ids[0])
	if f.hasRoom() {
		t.Fatal("room in a full table whose filters were all polled within a minute")
	}
	if _, ok := f.pin(ep, "0x9"); ok || f.len() != 3 {
		t.Fatalf("a filter pinned in a full table of filters polled within a minute (%d held)", f.len())
	}
	now = now.Add(31 * time.Second) // 0x2 and 0x3 unpolled for 61 s
	if !f.hasRoom() {
		t.Fatal("no room in a full table with filters unpolled for a minute")
	}
	if _, ok := f.pin(ep, "0x4"); !ok {
		t.Fatal("no room made by a filter unpolled for a minute")
	}
	if _, _, ok := f.lookup(ids[0]); !ok || f.len() != 3 {
		t.Fatalf("the filter polled 31 s before made room (or the table holds %d)", f.len())
	}
}

// A flood of filters nobody polls refuses other clients' filters for
// seconds, not a minute: a filter never polled makes room once it is
// unpolledRoomAfter old, before one a client polls.
func TestFilters_AFullTableMakesRoomFromFiltersNeverPolled(t *testing.T) {
	now := time.Unix(1000, 0)
	f := newFilterTable(func() time.Time { return now })
	f.max = 3
	ep := &endpoint{}
	polled, _ := f.pin(ep, "0x1")
	f.lookup(polled)
	f.pin(ep, "0xf1")
	f.pin(ep, "0xf2")
	now = now.Add(2 * time.Second)
	if f.hasRoom() {
		t.Fatal("room made by filters created 2 s ago")
	}
	now = now.Add(9 * time.Second) // the flood's filters 11 s old, the polled one polled 11 s ago
	if !f.hasRoom() {
		t.Fatal("no room in a full table with filters never polled for 11 s")
	}
	if _, ok := f.pin(ep, "0x4"); !ok {
		t.Fatal("no room made by a filter never polled")
	}
	if _, _, ok := f.lookup(polled); !ok || f.len() != 3 {
		t.Fatalf("the polled filter made room for a new one (or the table holds %d)", f.len())
	}
}
