package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestBatch_EchoesIDsByteForByteInOrder(t *testing.T) {
	u := start(t, Config{})
	body := `[
		{"jsonrpc":"2.0","id":7,"method":"eth_chainId"},
		{"jsonrpc":"2.0","id":"abc","method":"net_version"},
		{"jsonrpc":"2.0","id":null,"method":"eth_chainId"},
		{"jsonrpc":"2.0","id":1.50,"method":"eth_nope"},
		{"jsonrpc":"2.0","id":"a<b\u0041","method":"eth_chainId"},
		42
	]`
	status, _, out := post(t, newClient(t), u.URL(), body)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	var rs []response
	if err := json.Unmarshal(out, &rs); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	wantIDs := []string{`7`, `"abc"`, `null`, `1.50`, `"a<b\u0041"`, `null`}
	if len(rs) != len(wantIDs) {
		t.Fatalf("%d responses, want %d: %s", len(rs), len(wantIDs), out)
	}
	for i, want := range wantIDs {
		if string(rs[i].ID) != want {
			t.Errorf("response %d id %s, want %s", i, rs[i].ID, want)
		}
	}
	if !strings.Contains(string(out), `"id":"a<b\u0041"`) {
		t.Errorf("id not echoed byte for byte: %s", out)
	}
	if string(rs[0].Result) != `"0x7a69"` || string(rs[1].Result) != `"31337"` {
		t.Errorf("results %s %s", rs[0].Result, rs[1].Result)
	}
	if rs[3].Error == nil || rs[3].Error.Code != CodeMethodNotFound {
		t.Errorf("unknown method: %+v", rs[3])
	}
	if rs[5].Error == nil || rs[5].Error.Code != CodeInvalidRequest {
		t.Errorf("non-object element: %+v", rs[5])
	}
	got := u.Counters()
	if got.HTTP != 1 || got.Total != 6 || got.ByMethod["eth_chainId"] != 3 || got.ByMethod["eth_nope"] != 1 {
		t.Errorf("counters %+v", got)
	}
}

func TestJSONRPC_Errors(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	for _, tc := range []struct {
		name, body string
		code       int
	}{
		{"parse error", `{"jsonrpc":"2.0",`, CodeParseError},
		{"bad batch", `[{"id":1},`, CodeParseError},
		{"empty batch", `[]`, CodeInvalidRequest},
		{"missing method", `{"id":3}`, CodeInvalidRequest},
		{"unknown method", `{"id":4,"method":"eth_bogus"}`, CodeMethodNotFound},
		{"named params", `{"id":5,"method":"eth_getBalance","params":{"a":1}}`, CodeInvalidParams},
	} {
		status, _, out := post(t, c, u.URL(), tc.body)
		var r response
		if err := json.Unmarshal(out, &r); err != nil {
			t.Errorf("%s: decode %s: %v", tc.name, out, err)
			continue
		}
		if status != http.StatusOK || r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("%s: status %d body %s, want 200 and code %d", tc.name, status, out, tc.code)
		}
	}
}

func TestJSONRPC_GetIsNotAllowed(t *testing.T) {
	u := start(t, Config{})
	resp, err := newClient(t).Get(u.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestJSONRPC_AnyPathServes(t *testing.T) {
	u := start(t, Config{})
	status, _, _ := post(t, newClient(t), u.URL()+"/v2/some-key", requestBody("eth_chainId"))
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
}
