package engine

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// Hostile or heavy write traffic cannot grow the hash map: past
// maxAffinityRefs the oldest go, and every hash goes with its window.
func TestWriteAffinity_RefsAreBoundedAndExpire(t *testing.T) {
	w := newWriteAffinity(30 * time.Second)
	a, b := &endpoint{Name: "a"}, &endpoint{Name: "b"}
	t0 := time.Unix(1_700_000_000, 0)
	ref := func(i int) string { return fmt.Sprintf("0x%064x", i) }
	const n = maxAffinityRefs + 1000
	for i := range n {
		w.note(a, ref(i), t0.Add(time.Duration(i)*time.Microsecond))
	}
	now := t0.Add(n * time.Microsecond).UnixNano()
	if len(w.refs) != maxAffinityRefs || w.size != maxAffinityRefs {
		t.Fatalf("%d writes: %d refs held (ring %d), want %d", n, len(w.refs), w.size, maxAffinityRefs)
	}
	if w.lookup(ref(999), now) != nil || w.lookup(ref(1000), now) != a || w.lookup(ref(n-1), now) != a {
		t.Fatal("want the oldest 1000 dropped and the rest held")
	}

	// Sent again, to another endpoint: the later write wins and its old
	// place in the ring removes nothing when it comes out.
	w.note(b, ref(1000), t0.Add(n*time.Microsecond))
	w.note(b, ref(n), t0.Add(n*time.Microsecond))
	if got := w.lookup(ref(1000), now); got != b {
		t.Fatalf("a hash sent again maps to %v, want b", got)
	}
	if got := w.held(now); got != maxAffinityRefs {
		t.Fatalf("held %d, want %d", got, maxAffinityRefs)
	}

	late := t0.Add(30*time.Second + time.Duration(n)*time.Microsecond)
	if w.lookup(ref(n-1), late.UnixNano()) != nil || w.active(late) != nil || w.held(late.UnixNano()) != 0 {
		t.Fatal("hashes and the affinity outlive their window")
	}
	w.note(a, "0xnew", late)
	if len(w.refs) != 1 || w.lookup("0xnew", late.UnixNano()) != a {
		t.Fatalf("after the window a new write leaves %d refs held, want only its own", len(w.refs))
	}
}

// Every request asks for its affinity: while no write is in its window
// that is one atomic load, and an unaffected read allocates nothing.
func TestWriteAffinity_UnaffectedRequestsDoNotAllocate(t *testing.T) {
	e := &Engine{affinity: newWriteAffinity(30 * time.Second), methods: jsonrpc.NewMethodTable("evm", jsonrpc.MethodLists{})}
	read := jsonrpc.NewRequest(json.RawMessage(`1`), "eth_getBalance", json.RawMessage(`["0xaa","latest"]`))
	now := time.Now()
	if a := testing.AllocsPerRun(100, func() { e.affinityFor(read, jsonrpc.ClassRead, now) }); a != 0 {
		t.Errorf("no write in the window: %.0f allocations", a)
	}
	e.affinity.note(&endpoint{Name: "a"}, "0xabc", now)
	if a := testing.AllocsPerRun(100, func() { e.affinityFor(read, jsonrpc.ClassRead, now) }); a != 0 {
		t.Errorf("a write in the window, a read it does not affect: %.0f allocations", a)
	}
}

// go test -run XXX -bench WriteAffinity -benchmem ./engine/
func BenchmarkWriteAffinity_For(b *testing.B) {
	e := &Engine{affinity: newWriteAffinity(30 * time.Second), methods: jsonrpc.NewMethodTable("evm", jsonrpc.MethodLists{})}
	now := time.Now()
	req := func(method, params string) *jsonrpc.Request {
		return jsonrpc.NewRequest(json.RawMessage(`1`), method, json.RawMessage(params))
	}
	latest := req("eth_getBalance", `["0xaa","latest"]`)
	b.Run("no-write", func(b *testing.B) {
		for b.Loop() {
			e.affinityFor(latest, jsonrpc.ClassRead, now)
		}
	})
	ep := &endpoint{Name: "a"}
	for i := range maxAffinityRefs {
		e.affinity.note(ep, fmt.Sprintf("0x%064x", i), now)
	}
	for _, c := range []struct {
		name string
		r    *jsonrpc.Request
	}{
		{"write-unaffected-read", latest},
		{"write-pending-read", req("eth_getTransactionCount", `["0xaa","pending"]`)},
		{"write-hash-lookup", req("eth_getTransactionByHash", fmt.Sprintf(`["0x%064x"]`, 7))},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.affinityFor(c.r, jsonrpc.ClassRead, now)
			}
		})
	}
}
