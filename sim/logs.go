package sim

import "encoding/json"

// maxLogRange is the widest block range evmGetLogs lists logs for.
const maxLogRange = 100

// The simulated chain's one log a block: a contract's Transfer event.
const (
	logAddress = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
	logTopic   = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
)

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
		// Every member a node gives: ethers' log formatter refuses one
		// without address, topics or transactionHash.
		logs = append(logs, map[string]any{
			"address":          logAddress,
			"topics":           []string{logTopic},
			"data":             "0x",
			"blockNumber":      hexUint(n),
			"blockHash":        u.evmBlockHash(n),
			"blockTimestamp":   hexUint(blockTimestamp(n, u.cfg.BlockTime)),
			"transactionHash":  hexHash(digest("logtx", u.cfg.ChainID, n)),
			"transactionIndex": "0x0",
			"logIndex":         "0x0",
			"removed":          false,
		})
	}
	return logs, nil
}
