package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/rpc"
)

// TestRevert_ErrorObjectPassesThroughAndBreakerStaysClosed calls a
// contract that always reverts: the error object (code, message, data)
// reaches the client unchanged, and rpcdash does not count it against geth.
func TestRevert_ErrorObjectPassesThroughAndBreakerStaysClosed(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.rpcdash.drain("simA")
	ctx := ctxT(t)

	rcpt := sendAndMine(t, s.via, nil, nil, reverterInitCode("rpcdash says no"))
	contract := rcpt.ContractAddress

	const calls = 5 // more than breaker.failures (3) in a row
	for _, method := range []string{"eth_call", "eth_estimateGas"} {
		params := fmt.Sprintf(`[{"from":"%s","to":"%s","data":"0x"}]`, devAddr, contract)
		if method == "eth_call" {
			params = fmt.Sprintf(`[{"from":"%s","to":"%s","data":"0x"},"latest"]`, devAddr, contract)
		}
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":42,"method":%q,"params":%s}`, method, params)
		want := mustPost(t, s.geth.URL(), req)
		for range calls {
			got := mustPost(t, s.rpcdash.URL(), req)
			answeredBy(t, "geth", got.Header)
			if a := got.Header.Get("X-Rpcdash-Attempts"); a != "1" {
				t.Errorf("%s revert took %s attempts, want 1 (a revert is an answer, not a failure)", method, a)
			}
			if !bytes.Equal(got.Body, want.Body) {
				t.Errorf("%s through rpcdash: %s\ngeth directly: %s", method, got.Body, want.Body)
			}
		}
		var e struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Data    string `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(want.Body, &e); err != nil {
			t.Fatal(err)
		}
		if e.Error.Code != 3 || !strings.Contains(e.Error.Message, "rpcdash says no") || !strings.HasPrefix(e.Error.Data, "0x08c379a0") {
			t.Errorf("geth's %s answer %s is not the revert this test expects", method, want.Body)
		}
	}

	// go-ethereum's client sees the same error: code 3 and the revert data.
	_, err := s.via.eth.CallContract(ctx, ethereum.CallMsg{From: devAddr, To: &contract}, nil)
	answeredBy(t, "geth", s.via.rec.last(t))
	var rpcErr rpc.Error
	var dataErr rpc.DataError
	if !errors.As(err, &rpcErr) || rpcErr.ErrorCode() != 3 || !errors.As(err, &dataErr) {
		t.Fatalf("CallContract through rpcdash: %v, want a JSON-RPC error with code 3 and data", err)
	}
	_, direct := s.direct.eth.CallContract(ctx, ethereum.CallMsg{From: devAddr, To: &contract}, nil)
	var directData rpc.DataError
	if !errors.As(direct, &directData) || dataErr.ErrorData() != directData.ErrorData() || err.Error() != direct.Error() {
		t.Errorf("client error through rpcdash %q data %v; directly %q data %v", err, dataErr.ErrorData(), direct, directData)
	}

	st := s.rpcdash.status()
	if got := st.breaker("geth"); got != "closed" {
		t.Errorf("geth's breaker is %q after %d reverts, want closed", got, 2*calls+1)
	}
	for _, e := range st.Endpoints {
		if e.Name == "geth" && e.Breaker.ConsecutiveFailures != 0 {
			t.Errorf("geth's breaker counts %d consecutive failures after reverts, want 0", e.Breaker.ConsecutiveFailures)
		}
	}
	if evs := s.rpcdash.breakerEvents("geth"); len(evs) != 0 {
		t.Errorf("geth's breaker moved: %v", evs)
	}
}
