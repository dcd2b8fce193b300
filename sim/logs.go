package sim

import "encoding/json"

// maxLogRange is the widest block range evmGetLogs lists logs for.
const maxLogRange = 100

// evmGetLogs answers a filter whose fromBlock and toBlock are both numbers
// with one log per block of the range this upstream has (every block of
// the simulated chain emits one), so a range past its head has none: a node
// behind answers [] for a block it has not seen yet, as geth does. Any
// other filter (tags, a blockHash, a range over maxLogRange blocks) is
// answered [].
func evmGetLogs(u *Upstream, args []json.RawMessage) (any, *Error) {
	var f struct {
		FromBlock string `json:"fromBlock"`
		ToBlock   string `json:"toBlock"`
	}
	logs := []any{}
	if len(args) == 0 || json.Unmarshal(args[0], &f) != nil {
		return logs, nil
	}
	from, errFrom := parseHexQuantity(f.FromBlock)
	to, errTo := parseHexQuantity(f.ToBlock)
	if errFrom != nil || errTo != nil || to-from >= maxLogRange {
		return logs, nil
	}
	for n := from; n <= min(to, u.Head()); n++ {
		logs = append(logs, map[string]any{
			"blockNumber": hexUint(n),
			"blockHash":   u.evmBlockHash(n),
			"logIndex":    "0x0",
			"data":        "0x",
		})
	}
	return logs, nil
}
