package sim

import (
	"encoding/json"
	"sync"
)

// A transaction a sim took lands, as on a cluster, where every node sees
// it: its signature is known to every sim of the process, at the processed
// slot of the sim that took it, and getSignatureStatuses answers it there
// as processed, then confirmed, then finalized as the slots move on. A
// signature no sim took is null, as a node answers one it has not seen.

// maxLanded bounds the signatures held; the oldest are forgotten first.
const maxLanded = 1 << 16

type landedSigs struct {
	mu    sync.Mutex
	slot  map[string]int64
	order []string // ring of the signatures, oldest at next
	next  int
}

var landed = landedSigs{slot: map[string]int64{}}

func (l *landedSigs) add(sig string, slot int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.slot[sig]; ok {
		return // sent again: it landed once, at its first slot
	}
	if len(l.order) < maxLanded {
		l.order = append(l.order, sig)
	} else {
		delete(l.slot, l.order[l.next])
		l.order[l.next] = sig
		l.next = (l.next + 1) % maxLanded
	}
	l.slot[sig] = slot
}

func (l *landedSigs) at(sig string) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.slot[sig]
	return s, ok
}

// solSignatureStatuses answers getSignatureStatuses ([signatures, config?]).
func solSignatureStatuses(u *Upstream, args []json.RawMessage) (any, *Error) {
	var sigs []string
	if len(args) == 0 || json.Unmarshal(args[0], &sigs) != nil {
		return nil, invalidParams("want [signatures, config?]")
	}
	if len(sigs) > 256 {
		return nil, invalidParams("Too many inputs provided; max 256")
	}
	processed, confirmed, finalized := solSlotAt(u, "processed"), solSlotAt(u, "confirmed"), solSlotAt(u, "finalized")
	value := make([]any, len(sigs))
	for i, sig := range sigs {
		slot, ok := landed.at(sig)
		if !ok || slot > processed {
			continue // null: not seen (yet) by this node
		}
		st := map[string]any{"slot": slot, "err": nil, "status": map[string]any{"Ok": nil}}
		switch {
		case slot <= finalized:
			st["confirmations"], st["confirmationStatus"] = nil, "finalized"
		case slot <= confirmed:
			st["confirmations"], st["confirmationStatus"] = processed-slot, "confirmed"
		default:
			st["confirmations"], st["confirmationStatus"] = 0, "processed"
		}
		value[i] = st
	}
	return withContext(processed, value), nil
}
