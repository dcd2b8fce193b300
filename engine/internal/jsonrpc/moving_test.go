package jsonrpc

import "testing"

func TestMovingBlock_TagsAndDefaults(t *testing.T) {
	tab := NewMethodTable("evm", MethodLists{})
	cases := []struct {
		method, params string
		want           bool
	}{
		{"eth_blockNumber", ``, true},
		{"eth_gasPrice", `[]`, true},
		{"eth_chainId", `[]`, false},
		{"eth_getBalance", `["0x00000000000000000000000000000000000000aa"]`, true},
		{"eth_getBalance", `["0x00000000000000000000000000000000000000aa","latest"]`, true},
		{"eth_getBalance", `["0x00000000000000000000000000000000000000aa","pending"]`, true},
		{"eth_getBalance", `["0x00000000000000000000000000000000000000aa","safe"]`, true},
		{"eth_getBalance", `["0x00000000000000000000000000000000000000aa","finalized"]`, true},
		{"eth_getBalance", `["0x00000000000000000000000000000000000000aa","earliest"]`, false},
		{"eth_getBalance", `["0x00000000000000000000000000000000000000aa","0x10"]`, false},
		{"eth_getBlockByNumber", `["0x10",false]`, false},
		{"eth_getBlockByNumber", `["latest",false]`, true},
		{"eth_call", `[{},{"blockHash":"0x01"}]`, false},
		{"eth_call", `[{},{"blockNumber":"latest"}]`, true},
		{"eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x2"}]`, false},
		{"eth_getLogs", `[{"fromBlock":"0x1"}]`, true},
		{"eth_getLogs", `[{"blockHash":"0x01"}]`, false},
	}
	for _, c := range cases {
		if got := tab.MovingBlock(c.method, []byte(c.params)); got != c.want {
			t.Errorf("MovingBlock(%s, %s) = %v, want %v", c.method, c.params, got, c.want)
		}
	}
}
