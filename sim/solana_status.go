package sim

import "encoding/json"

// A Solana transaction a sim took lands (see landed.go) at the processed
// slot of the sim that took it, and getSignatureStatuses answers it there
// as processed, then confirmed, then finalized as the slots move on. A
// signature no sim took is null, as a node answers one it has not seen.

var landedSigs = newLandedRefs()

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
		slot, ok := landedSigs.at(sig)
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
