package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseBody_SingleRequest(t *testing.T) {
	const none = "<absent>"
	tests := []struct {
		name, body         string
		id, method, params string // raw bytes expected; none for nil
		code               int    // per-element error code, 0 when valid
	}{
		{name: "number id", body: `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`, id: `1`, method: "eth_blockNumber", params: `[]`},
		{name: "big number id", body: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}`, id: `123456789012345678901234567890`, method: "m", params: none},
		{name: "decimal id", body: `{"jsonrpc":"2.0","id":1.50,"method":"m"}`, id: `1.50`, method: "m", params: none},
		{name: "negative exponent id", body: `{"jsonrpc":"2.0","id":-7e2,"method":"m"}`, id: `-7e2`, method: "m", params: none},
		{name: "string id", body: `{"jsonrpc":"2.0","id":"a\"b\u00e9","method":"m"}`, id: `"a\"b\u00e9"`, method: "m", params: none},
		{name: "null id", body: `{"jsonrpc":"2.0","id":null,"method":"m"}`, id: `null`, method: "m", params: none},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"m","params":{"a":1}}`, id: none, method: "m", params: `{"a":1}`},
		{name: "unknown members and whitespace", body: " \n\t{ \"x-trace\" : {\"a\":[1,\"]\"]} , \"jsonrpc\" : \"2.0\", \"id\" : 9 , \"method\" : \"eth_call\" , \"params\" : [ {\"to\":\"0x1\"} , \"latest\" ] }\r\n", id: `9`, method: "eth_call", params: `[ {"to":"0x1"} , "latest" ]`},
		{name: "escaped key and method", body: `{"jsonrpc":"2.0","id":1,"\u006dethod":"eth_\u0063all"}`, id: `1`, method: "eth_call", params: none},
		{name: "duplicate keys alike", body: `{"jsonrpc":"2.0","id":2,"id":2,"method":"b","method":"b"}`, id: `2`, method: "b", params: none},
		{name: "null params", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, id: `1`, method: "m", params: none},
		// geth answers boolean ids (it refuses only objects and arrays).
		{name: "id bool", body: `{"jsonrpc":"2.0","id":true,"method":"m"}`, id: `true`, method: "m", params: none},
		{name: "id false", body: `{"jsonrpc":"2.0","id":false,"method":"m"}`, id: `false`, method: "m", params: none},
		{name: "control characters in method", body: `{"jsonrpc":"2.0","id":1,"method":"m\u0001"}`, id: `1`, method: "m\x01", params: none},
		{name: "method at geth's length bound", body: `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("m", MaxMethodLen) + `"}`, id: `1`, method: strings.Repeat("m", MaxMethodLen), params: none},

		{name: "wrong version", body: `{"jsonrpc":"1.0","id":3,"method":"m"}`, id: `3`, code: CodeInvalidRequest},
		{name: "version number", body: `{"jsonrpc":2.0,"id":3,"method":"m"}`, id: `3`, code: CodeInvalidRequest},
		{name: "version missing", body: `{"id":"k","method":"m"}`, id: `"k"`, code: CodeInvalidRequest},
		{name: "method missing", body: `{"jsonrpc":"2.0","id":4}`, id: `4`, code: CodeInvalidRequest},
		{name: "method key is case-sensitive", body: `{"jsonrpc":"2.0","id":4,"METHOD":"m"}`, id: `4`, code: CodeInvalidRequest},
		// A member that differs from a request member only in case is read
		// as that member by Go's encoding/json (geth): refused, so that
		// rpcdash and the node never read two different requests.
		{name: "folded method beside method", body: `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","Method":"eth_sendRawTransaction","params":["0x1"]}`, id: `1`, code: CodeInvalidRequest},
		{name: "folded method alone", body: `{"jsonrpc":"2.0","id":1,"Method":"eth_sendRawTransaction"}`, id: `1`, code: CodeInvalidRequest},
		{name: "folded id beside id", body: `{"jsonrpc":"2.0","id":1,"ID":2,"method":"m"}`, id: none, code: CodeInvalidRequest},
		{name: "folded id alone", body: `{"jsonrpc":"2.0","Id":7,"method":"eth_chainId"}`, id: none, code: CodeInvalidRequest},
		{name: "folded params", body: `{"jsonrpc":"2.0","id":1,"method":"m","PARAMS":[]}`, id: `1`, code: CodeInvalidRequest},
		{name: "folded version", body: `{"JSONRPC":"2.0","jsonrpc":"2.0","id":1,"method":"m"}`, id: `1`, code: CodeInvalidRequest},
		{name: "folded by a long s", body: `{"jsonrpc":"2.0","id":1,"method":"m","param\u017f":[]}`, id: `1`, code: CodeInvalidRequest},
		{name: "folded id, escaped", body: `{"jsonrpc":"2.0","id":1,"method":"m","i\u0044":2}`, id: none, code: CodeInvalidRequest},
		// Nodes and gateways read the first, the last or neither of two
		// "method" members: rpcdash would route one method and a node run
		// another.
		{name: "two different methods", body: `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","method":"eth_getBalance"}`, id: `1`, code: CodeInvalidRequest},
		{name: "method not string", body: `{"jsonrpc":"2.0","id":5,"method":1}`, id: `5`, code: CodeInvalidRequest},
		{name: "empty method", body: `{"jsonrpc":"2.0","id":1,"method":""}`, id: `1`, code: CodeInvalidRequest},
		{name: "empty method notification", body: `{"jsonrpc":"2.0","method":""}`, id: none, code: CodeInvalidRequest},
		{name: "method past geth's length bound", body: `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("m", MaxMethodLen+1) + `"}`, id: `1`, code: CodeInvalidRequest},
		// geth: -32602 "non-array args"
		{name: "params string", body: `{"jsonrpc":"2.0","id":6,"method":"m","params":"x"}`, id: `6`, code: CodeInvalidParams},
		{name: "params number", body: `{"jsonrpc":"2.0","id":6,"method":"m","params":1}`, id: `6`, code: CodeInvalidParams},
		{name: "params bool", body: `{"jsonrpc":"2.0","id":6,"method":"m","params":true}`, id: `6`, code: CodeInvalidParams},
		{name: "id object", body: `{"jsonrpc":"2.0","id":{"a":1},"method":"m"}`, id: none, code: CodeInvalidRequest},
		{name: "id array", body: `{"jsonrpc":"2.0","id":[1],"method":"m"}`, id: none, code: CodeInvalidRequest},
		{name: "empty object", body: `{}`, id: none, code: CodeInvalidRequest},
	}
	raw := func(s string) json.RawMessage {
		if s == none {
			return nil
		}
		return json.RawMessage(s)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, perr := ParseBody([]byte(tt.body))
			if perr != nil {
				t.Fatalf("whole-body error %v", perr)
			}
			if body.Batch || len(body.Elements) != 1 {
				t.Fatalf("got batch=%v with %d elements, want one single element", body.Batch, len(body.Elements))
			}
			el := body.Elements[0]
			if !bytes.Equal(el.ID, raw(tt.id)) || (el.ID == nil) != (tt.id == none) {
				t.Errorf("element id = %q, want %q", el.ID, tt.id)
			}
			if tt.code != 0 {
				if el.Err == nil || el.Err.Code != tt.code || el.Req != nil {
					t.Fatalf("got req=%v err=%v, want error code %d", el.Req, el.Err, tt.code)
				}
				return
			}
			if el.Err != nil || el.Req == nil {
				t.Fatalf("unexpected error %v", el.Err)
			}
			r := el.Req
			if string(r.Raw) != strings.TrimSpace(tt.body) {
				t.Errorf("Raw = %q, want the trimmed body", r.Raw)
			}
			if r.Method != tt.method {
				t.Errorf("Method = %q, want %q", r.Method, tt.method)
			}
			if !bytes.Equal(r.ID, raw(tt.id)) || r.IsNotification() != (tt.id == none) {
				t.Errorf("ID = %q (notification %v), want %q", r.ID, r.IsNotification(), tt.id)
			}
			if !bytes.Equal(r.Params, raw(tt.params)) || (r.Params == nil) != (tt.params == none) {
				t.Errorf("Params = %q, want %q", r.Params, tt.params)
			}
		})
	}
}

func TestParseBody_WholeBodyErrors(t *testing.T) {
	tests := []struct {
		name, body string
		code       int
	}{
		{"empty", "", CodeParseError},
		{"whitespace only", " \n ", CodeParseError},
		{"not JSON", "hello", CodeParseError},
		{"truncated object", `{"jsonrpc":"2.0","id":1,"method":"eth_`, CodeParseError},
		{"truncated batch", `[{"jsonrpc":"2.0","id":1,"method":"m"},`, CodeParseError},
		{"two values", `{}{}`, CodeParseError},
		{"trailing comma", `{"jsonrpc":"2.0","method":"m",}`, CodeParseError},
		{"empty batch", `[]`, CodeInvalidRequest},
		{"empty batch with space", "[ \n ]", CodeInvalidRequest},
		{"number", `1`, CodeInvalidRequest},
		{"string", `"x"`, CodeInvalidRequest},
		{"null", `null`, CodeInvalidRequest},
		{"bool", `true`, CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := ParseBody([]byte(tt.body))
			if err == nil || err.Code != tt.code {
				t.Fatalf("err = %v, want code %d", err, tt.code)
			}
			if len(body.Elements) != 0 {
				t.Errorf("got %d elements with a whole-body error", len(body.Elements))
			}
		})
	}
}

func TestParseBody_BatchKeepsOrderAndAnswersInvalidElements(t *testing.T) {
	elems := []string{
		`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","extra":[1,{"}":"]"}]}`,
		`1`,
		`{"jsonrpc":"1.0","id":7,"method":"m"}`,
		`{"jsonrpc":"2.0","method":"notify","params":[]}`,
		`{"jsonrpc":"2.0","id":"s","method":"eth_getBalance","params":["0xa","latest"]}`,
		`[]`,
		`{"jsonrpc":"2.0","id":"q","method":{}}`,
		`{"jsonrpc":"2.0","id":false,"method":"m"}`,
		`null`,
	}
	body := "[\n  " + strings.Join(elems, " ,\n\t") + "\n]"
	got, perr := ParseBody([]byte(body))
	if perr != nil {
		t.Fatal(perr)
	}
	if !got.Batch || len(got.Elements) != len(elems) {
		t.Fatalf("batch=%v elements=%d, want batch of %d", got.Batch, len(got.Elements), len(elems))
	}
	want := []struct {
		method string // "" for an invalid element
		id     string // "" for nil
	}{
		{"eth_chainId", `1`}, {"", ""}, {"", `7`}, {"notify", ""},
		{"eth_getBalance", `"s"`}, {"", ""}, {"", `"q"`}, {"m", "false"}, {"", ""},
	}
	for i, w := range want {
		el := got.Elements[i]
		if string(el.ID) != w.id {
			t.Errorf("element %d: ID = %q, want %q", i, el.ID, w.id)
		}
		if w.method == "" {
			if el.Req != nil || el.Err == nil || el.Err.Code != CodeInvalidRequest {
				t.Errorf("element %d: req=%v err=%v, want invalid request", i, el.Req, el.Err)
			}
			continue
		}
		if el.Err != nil || el.Req == nil {
			t.Fatalf("element %d: unexpected error %v", i, el.Err)
		}
		if el.Req.Method != w.method || string(el.Req.Raw) != elems[i] {
			t.Errorf("element %d: method %q raw %q, want %q %q", i, el.Req.Method, el.Req.Raw, w.method, elems[i])
		}
	}
	if !got.Elements[3].Req.IsNotification() {
		t.Error("element 3 should be a notification")
	}
}

func TestParseBody_BatchOfOne(t *testing.T) {
	got, err := ParseBody([]byte(`[{"jsonrpc":"2.0","id":1,"method":"m"}]`))
	if err != nil || !got.Batch || len(got.Elements) != 1 || got.Elements[0].Req == nil {
		t.Fatalf("got %+v, %v; want a batch of one valid request", got, err)
	}
}

type wireError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func TestAppendError_ParsesBack(t *testing.T) {
	tests := []struct {
		name     string
		id       json.RawMessage
		err      *Error
		wantID   string
		wantMsg  string
		wantData string
	}{
		{"nil id", nil, &Error{Code: CodeParseError, Message: "parse error"}, "null", "parse error", ""},
		{"number id", json.RawMessage(`1.50`), &Error{Code: CodeInvalidRequest, Message: "x"}, "1.50", "x", ""},
		{"string id", json.RawMessage(`"a\"b"`), &Error{Code: CodeUpstream, Message: "all upstreams failed"}, `"a\"b"`, "all upstreams failed", ""},
		{"escapes", json.RawMessage(`7`), &Error{Code: 1, Message: "q\"\\\n\r\t\x01</>é 🙂"}, "7", "q\"\\\n\r\t\x01</>é 🙂", ""},
		{"invalid utf-8", json.RawMessage(`7`), &Error{Code: 1, Message: "a\xffb"}, "7", "a\ufffdb", ""},
		{"data", json.RawMessage(`null`), &Error{Code: CodeMethodNotSupported, Message: "m", Data: map[string]int{"n": 2}}, "null", "m", `{"n":2}`},
		{"unmarshalable data dropped", json.RawMessage(`1`), &Error{Code: 2, Message: "m", Data: func() {}}, "1", "m", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("keep")
			out := AppendError(prefix, tt.id, tt.err)
			if !bytes.HasPrefix(out, []byte("keep")) {
				t.Fatalf("dst prefix lost: %q", out)
			}
			out = out[4:]
			if !json.Valid(out) {
				t.Fatalf("not valid JSON: %q", out)
			}
			var w wireError
			if err := json.Unmarshal(out, &w); err != nil {
				t.Fatal(err)
			}
			if w.JSONRPC != "2.0" || string(w.ID) != tt.wantID || w.Error.Code != tt.err.Code || w.Error.Message != tt.wantMsg || string(w.Error.Data) != tt.wantData {
				t.Errorf("parsed back %+v from %s", w, out)
			}
			info := InspectResponse(out)
			if !info.Valid || !info.HasError || info.ErrCode != tt.err.Code || info.ErrMessage != tt.wantMsg {
				t.Errorf("InspectResponse = %+v", info)
			}
		})
	}
	if got := (&Error{Code: -32000, Message: "boom"}).Error(); !strings.Contains(got, "-32000") || !strings.Contains(got, "boom") {
		t.Errorf("Error() = %q", got)
	}
}

func TestAppendBatch(t *testing.T) {
	tests := []struct {
		name  string
		parts [][]byte
		want  string
	}{
		{"none", nil, `[]`},
		{"all notifications", [][]byte{nil, nil}, `[]`},
		{"one", [][]byte{[]byte(`{"a":1}`)}, `[{"a":1}]`},
		{"skips nil, keeps order", [][]byte{nil, []byte(`{"id":2}`), nil, []byte(`{"id":1}`), []byte{}, []byte(`{"id":3}`)}, `[{"id":2},{"id":1},{"id":3}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := AppendBatch([]byte("x"), tt.parts)
			if string(out) != "x"+tt.want {
				t.Fatalf("got %q, want %q", out, "x"+tt.want)
			}
			var back []json.RawMessage
			if err := json.Unmarshal(out[1:], &back); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestInspectResponse(t *testing.T) {
	tests := []struct {
		name string
		body string
		want ResponseInfo
	}{
		{"result", `{"jsonrpc":"2.0","id":1,"result":"0x1b4"}`, ResponseInfo{Valid: true}},
		{"result object with nested error key", ` {"jsonrpc":"2.0","id":1,"result":{"error":{"code":1}}} `, ResponseInfo{Valid: true}},
		{"null result", `{"jsonrpc":"2.0","id":1,"result":null}`, ResponseInfo{Valid: true, ResultNull: true}},
		{"empty list result", `{"jsonrpc":"2.0","id":1,"result":[ ]}`, ResponseInfo{Valid: true, ResultEmptyList: true}},
		{"list result", `{"jsonrpc":"2.0","id":1,"result":[{}]}`, ResponseInfo{Valid: true}},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"the method eth_x does not exist"}}`, ResponseInfo{Valid: true, HasError: true, ErrCode: -32601, ErrMessage: "the method eth_x does not exist"}},
		{"error with data, message first", `{"error":{"message":"exec\u0020reverted","data":"0x08c3","code":3},"id":1,"jsonrpc":"2.0"}`, ResponseInfo{Valid: true, HasError: true, ErrCode: 3, ErrMessage: "exec reverted"}},
		{"error with odd code", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":7}}`, ResponseInfo{Valid: true, HasError: true}},
		{"null error beside result", `{"jsonrpc":"2.0","id":1,"result":"0x1","error":null}`, ResponseInfo{Valid: true}},
		// Both say two things (client libraries disagree on which wins):
		// not an answer, as one with neither. JSON-RPC 1.0's null result
		// beside its error is its error.
		{"error beside a result", `{"jsonrpc":"2.0","id":1,"result":"0x1","error":{"code":-32000,"message":"m"}}`, ResponseInfo{}},
		{"error beside a null result", `{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-32000,"message":"m"}}`, ResponseInfo{Valid: true, HasError: true, ErrCode: -32000, ErrMessage: "m"}},
		{"null error only", `{"jsonrpc":"2.0","id":1,"error":null}`, ResponseInfo{}},
		{"string error", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, ResponseInfo{}},
		{"neither", `{"jsonrpc":"2.0","id":1}`, ResponseInfo{}},
		// No "jsonrpc" member: viem and ethers take such an answer, and so
		// does rpcdash, when it has an id; a member that says another
		// version is not 2.0.
		{"no version", `{"id":1,"result":"0x1"}`, ResponseInfo{Valid: true}},
		{"no version, null result", `{"id":1,"result":null}`, ResponseInfo{Valid: true, ResultNull: true}},
		{"no version, error", `{"id":1,"error":{"code":3,"message":"execution reverted"}}`, ResponseInfo{Valid: true, HasError: true, ErrCode: 3, ErrMessage: "execution reverted"}},
		{"no version, 1.0's null error", `{"id":1,"result":"0x1","error":null}`, ResponseInfo{Valid: true}},
		{"no version, neither", `{"id":1}`, ResponseInfo{}},
		{"no version, null id", `{"id":null,"error":{"code":-32005,"message":"rate limited"}}`, ResponseInfo{Valid: true, HasError: true, ErrCode: -32005, ErrMessage: "rate limited"}},
		{"no version, no id", `{"result":"0x1"}`, ResponseInfo{}},
		{"no version, no id, a provider's error", `{"error":{"code":"forbidden","message":"plan does not include archive data"}}`, ResponseInfo{}},
		{"version, no id", `{"jsonrpc":"2.0","result":"0x1"}`, ResponseInfo{Valid: true}},
		{"no version, string error", `{"id":1,"error":"boom"}`, ResponseInfo{}},
		{"escaped version", `{"js\u006fnrpc":"2\u002e0","id":1,"result":"0x1"}`, ResponseInfo{Valid: true}},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"result":"0x1"}`, ResponseInfo{}},
		{"wrong version, escaped key", `{"js\u006fnrpc":"1.0","id":1,"result":"0x1"}`, ResponseInfo{}},
		{"version number", `{"jsonrpc":2.0,"id":1,"result":"0x1"}`, ResponseInfo{}},
		{"version null", `{"jsonrpc":null,"id":1,"result":"0x1"}`, ResponseInfo{}},
		{"version empty", `{"jsonrpc":"","id":1,"result":"0x1"}`, ResponseInfo{}},
		{"version 2.0 then 1.0", `{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"result":"0x1"}`, ResponseInfo{}},
		{"version key case", `{"JSONRPC":"1.0","id":1,"result":"0x1"}`, ResponseInfo{Valid: true}},
		{"result key case", `{"jsonrpc":"2.0","id":1,"Result":"0x1"}`, ResponseInfo{}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"result":"0x1"}]`, ResponseInfo{}},
		{"truncated", `{"jsonrpc":"2.0","id":1,"result":{"logs":[`, ResponseInfo{}},
		{"html", `<html>502 Bad Gateway</html>`, ResponseInfo{}},
		{"empty", ``, ResponseInfo{}},
		{"string", `"ok"`, ResponseInfo{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InspectResponse([]byte(tt.body)); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestResultString(t *testing.T) {
	tests := []struct {
		body string
		want string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":"0x1b4"}`, "0x1b4", true},
		{`{"jsonrpc":"2.0","id":1,"result":"a\u0041\n"}`, "aA\n", true},
		{`{"jsonrpc":"2.0","id":1,"result":"0x1","error":null}`, "0x1", true},
		{`{"jsonrpc":"2.0","id":1,"result":435}`, "", false},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, "", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`, "", false},
		{`{"jsonrpc":"2.0","id":1,"result":"0x1"`, "", false},
		{`["0x1"]`, "", false},
	}
	for _, tt := range tests {
		got, ok := ResultString([]byte(tt.body))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ResultString(%s) = %q, %v; want %q, %v", tt.body, got, ok, tt.want, tt.ok)
		}
	}
}

func TestResultUint64(t *testing.T) {
	tests := []struct {
		result string
		want   uint64
		ok     bool
	}{
		{`0`, 0, true},
		{`287391021`, 287391021, true},
		{`18446744073709551615`, 1<<64 - 1, true},
		{`18446744073709551616`, 0, false},
		{`99999999999999999999`, 0, false},
		{`123456789012345678901`, 0, false},
		{`-1`, 0, false},
		{`1.5`, 0, false},
		{`1e3`, 0, false},
		{`"12"`, 0, false},
		{`null`, 0, false},
		{`{"slot":1}`, 0, false},
	}
	for _, tt := range tests {
		body := `{"jsonrpc":"2.0","id":1,"result":` + tt.result + `}`
		got, ok := ResultUint64([]byte(body))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ResultUint64(%s) = %d, %v; want %d, %v", tt.result, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := ResultUint64([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"result":5}`)); ok {
		t.Error("an error response has no result")
	}
}

func TestWithParams(t *testing.T) {
	tests := []struct {
		name, raw, params, want string
	}{
		{"replaces, keeps everything else",
			`{"x":{"a":[1]},"jsonrpc":"2.0","id":1.50,"method":"eth_call","params":[{"to":"0x1"},"latest"],"z":null}`,
			`[{"to":"0x1"},"finalized"]`,
			`{"x":{"a":[1]},"jsonrpc":"2.0","id":1.50,"method":"eth_call","params":[{"to":"0x1"},"finalized"],"z":null}`},
		{"keeps whitespace",
			"{ \"jsonrpc\" : \"2.0\" , \"id\" : \"i\" , \"method\" : \"m\" , \"params\" : [ ] }",
			`[1]`,
			"{ \"jsonrpc\" : \"2.0\" , \"id\" : \"i\" , \"method\" : \"m\" , \"params\" : [1] }"},
		{"adds when absent",
			`{"jsonrpc":"2.0","id":1,"method":"getSlot"}`,
			` [{"commitment":"finalized"}] `,
			`{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"finalized"}]}`},
		{"replaces every duplicate",
			`{"jsonrpc":"2.0","params":[1],"id":1,"method":"m","params":[2]}`,
			`{"k":3}`,
			`{"jsonrpc":"2.0","params":{"k":3},"id":1,"method":"m","params":{"k":3}}`},
		{"notification stays one",
			`{"jsonrpc":"2.0","method":"m","params":null}`,
			`[]`,
			`{"jsonrpc":"2.0","method":"m","params":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, perr := ParseBody([]byte(tt.raw))
			if perr != nil || body.Elements[0].Req == nil {
				t.Fatalf("setup: %v %v", perr, body.Elements[0].Err)
			}
			orig := body.Elements[0].Req
			before := *orig
			got, err := orig.WithParams(json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Raw) != tt.want {
				t.Errorf("Raw = %s\nwant  %s", got.Raw, tt.want)
			}
			if string(got.ID) != string(orig.ID) || got.Method != orig.Method || got.IsNotification() != orig.IsNotification() {
				t.Errorf("id/method changed: %q %q", got.ID, got.Method)
			}
			if string(got.Params) != strings.TrimSpace(tt.params) {
				t.Errorf("Params = %s, want %s", got.Params, tt.params)
			}
			if string(before.Raw) != string(orig.Raw) {
				t.Errorf("original request changed: %s", orig.Raw)
			}
		})
	}
}

func TestWithParams_RefusesBadInput(t *testing.T) {
	r := NewRequest(json.RawMessage(`1`), "m", nil)
	for _, p := range []string{``, `1`, `"x"`, `null`, `[1`, `{}{}`} {
		if _, err := r.WithParams(json.RawMessage(p)); err == nil {
			t.Errorf("params %q accepted", p)
		}
	}
	bad := &Request{Raw: []byte(`[1]`), Method: "m"}
	if _, err := bad.WithParams(json.RawMessage(`[]`)); err == nil {
		t.Error("non-object Raw accepted")
	}
	invalid := &Request{Raw: []byte(`{"jsonrpc":"2.0","id":1}`)}
	_, err := invalid.WithParams(json.RawMessage(`[]`))
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInvalidRequest {
		t.Errorf("invalid request: err = %v, want invalid request", err)
	}
}

func TestWithParams_BuildsRawWhenMissing(t *testing.T) {
	r := &Request{ID: json.RawMessage(`"x"`), Method: "eth_getBalance", Params: json.RawMessage(`["0x1"]`)}
	got, err := r.WithParams(json.RawMessage(`["0x1","finalized"]`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":"x","method":"eth_getBalance","params":["0x1","finalized"]}`
	if string(got.Raw) != want {
		t.Errorf("Raw = %s, want %s", got.Raw, want)
	}
}

func TestNewRequest(t *testing.T) {
	r := NewRequest(json.RawMessage(`7`), "get\"Slot", json.RawMessage(`[]`))
	body, perr := ParseBody(r.Raw)
	if perr != nil || body.Elements[0].Req == nil {
		t.Fatalf("NewRequest built %s: %v %v", r.Raw, perr, body.Elements[0].Err)
	}
	back := body.Elements[0].Req
	if back.Method != "get\"Slot" || string(back.ID) != "7" || string(back.Params) != "[]" {
		t.Errorf("round trip: %+v", back)
	}
	if r.Method != back.Method || string(r.ID) != "7" || string(r.Params) != "[]" {
		t.Errorf("NewRequest fields: %+v", r)
	}
	n := NewRequest(nil, "m", nil)
	if !n.IsNotification() || n.Params != nil || string(n.Raw) != `{"jsonrpc":"2.0","method":"m"}` {
		t.Errorf("notification: %s", n.Raw)
	}
}

// FuzzParseBody checks the scanner against encoding/json as an oracle: the
// seeds run in every `go test`; `go test -fuzz FuzzParseBody` explores more.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x1"},"latest"]}`,
		`[{"jsonrpc":"2.0","id":"a\\","method":"m"},1,{"jsonrpc":"2.0","method":"\u006d"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"m","params":null,"method":2}`,
		`{"\u0069d":-0.5e3,"jsonrpc":"2\u002e0","method":"x\"y","params":{"a":"]}"}}`,
		`[]`, `[[]]`, `"x"`, `{"a":{"b":[{"c":"\\\""}]}}`,
		`{"jsonrpc":"2.0","method":""}`, `{"jsonrpc":"2.0","id":true,"method":"m","params":5}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","Method":"w"}`, `{"jsonrpc":"2.0","id":{},"M\u0065thod":"w"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, perr := ParseBody(body)
		if !json.Valid(body) {
			if perr == nil || perr.Code != CodeParseError {
				t.Fatalf("invalid JSON: err = %v", perr)
			}
			return
		}
		trimmed := bytes.Trim(body, " \t\r\n")
		switch trimmed[0] {
		case '{':
			if perr != nil || got.Batch || len(got.Elements) != 1 {
				t.Fatalf("single object: %+v %v", got, perr)
			}
			checkAgainstOracle(t, trimmed, got.Elements[0])
		case '[':
			var elems []json.RawMessage
			if err := json.Unmarshal(trimmed, &elems); err != nil {
				t.Fatal(err)
			}
			if len(elems) == 0 {
				if perr == nil || perr.Code != CodeInvalidRequest {
					t.Fatalf("empty batch: err = %v", perr)
				}
				return
			}
			if perr != nil || !got.Batch || len(got.Elements) != len(elems) {
				t.Fatalf("batch of %d: %d elements, err %v", len(elems), len(got.Elements), perr)
			}
			for i, e := range elems {
				checkAgainstOracle(t, e, got.Elements[i])
			}
		default:
			if perr == nil || perr.Code != CodeInvalidRequest {
				t.Fatalf("scalar body: err = %v", perr)
			}
		}
	})
}

func checkAgainstOracle(t *testing.T, raw []byte, el Element) {
	t.Helper()
	if raw[0] != '{' {
		if el.Err == nil || el.ID != nil {
			t.Fatalf("%s: non-object element accepted: %+v", raw, el)
		}
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	id, hasID := m["id"]
	idOK := !hasID || strings.ContainsRune(`"ntf-0123456789`, rune(id[0])) // booleans answered, as geth does
	var version, method string
	versionOK := json.Unmarshal(m["jsonrpc"], &version) == nil && m["jsonrpc"][0] == '"' && version == "2.0"
	methodOK := m["method"] != nil && m["method"][0] == '"' && json.Unmarshal(m["method"], &method) == nil &&
		method != "" && len(method) <= MaxMethodLen
	params, hasParams := m["params"]
	paramsOK := !hasParams || strings.ContainsRune("[{n", rune(params[0]))
	// A member that folds to a request member's name (as Go's decoder
	// matches keys) is refused; one that folds to "id" leaves no id.
	folded, foldedID := false, false
	for k := range m {
		for _, name := range requestMembers {
			if k != name && strings.EqualFold(k, name) {
				folded, foldedID = true, foldedID || name == "id"
			}
		}
	}
	wantID := json.RawMessage(nil)
	if hasID && idOK && !foldedID {
		wantID = id
	}
	if !bytes.Equal(el.ID, wantID) || (el.ID == nil) != (wantID == nil) {
		t.Fatalf("%s: ID = %q, want %q", raw, el.ID, wantID)
	}
	if valid := idOK && !folded && !twoMethods(t, raw) && versionOK && methodOK && paramsOK; valid != (el.Err == nil) {
		t.Fatalf("%s: valid = %v, oracle says %v", raw, el.Err == nil, valid)
	}
	if el.Err != nil {
		return
	}
	r := el.Req
	if string(r.Raw) != string(raw) || r.Method != method {
		t.Fatalf("%s: Raw %q Method %q, want method %q", raw, r.Raw, r.Method, method)
	}
	if hasParams && params[0] == 'n' {
		params = nil
	}
	if !bytes.Equal(r.Params, params) || (r.Params == nil) != (params == nil) {
		t.Fatalf("%s: Params %q, want %q", raw, r.Params, params)
	}
	nr, err := r.WithParams(json.RawMessage(`[true]`))
	if err != nil {
		t.Fatalf("%s: WithParams: %v", raw, err)
	}
	var after map[string]json.RawMessage
	if err := json.Unmarshal(nr.Raw, &after); err != nil {
		t.Fatalf("WithParams built invalid JSON %q: %v", nr.Raw, err)
	}
	if string(after["params"]) != `[true]` || len(after) != len(m)+map[bool]int{true: 0, false: 1}[hasParams] {
		t.Fatalf("WithParams %q from %q", nr.Raw, raw)
	}
	for k, v := range m {
		if k != "params" && !bytes.Equal(after[k], v) {
			t.Fatalf("WithParams changed %q: %q", k, nr.Raw)
		}
	}
}

func FuzzInspectResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":"0x1b4"}`,
		`{"jsonrpc":"2.0","id":1,"result":null,"error":null}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"m\u0041","code":3}}`,
		`{"jsonrpc":"2.0","id":1,"error":"x","result":1}`,
		`[{"jsonrpc":"2.0","result":1}]`,
		`{"id":1,"result":"0x1"}`,
		`{"jsonrpc":"1.0","id":1,"result":"0x1"}`,
		`{"jsonrpc":null,"id":1,"error":{"code":3}}`,
		`{"error":{"code":3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := InspectResponse(body)
		var want ResponseInfo
		var m map[string]json.RawMessage
		trimmed := bytes.Trim(body, " \t\r\n")
		// A "jsonrpc" member saying "2.0" (the last of duplicates, as
		// json.Unmarshal reads them), or none and an "id".
		version2 := func() bool {
			v, has := m["jsonrpc"]
			if !has {
				_, id := m["id"]
				return id
			}
			var version string
			return v[0] == '"' && json.Unmarshal(v, &version) == nil && version == "2.0"
		}
		if json.Valid(body) && trimmed[0] == '{' && json.Unmarshal(body, &m) == nil && version2() {
			e, res := m["error"], m["result"]
			switch {
			case e != nil && e[0] == '{':
				want = ResponseInfo{Valid: true, HasError: true}
				var em map[string]json.RawMessage
				_ = json.Unmarshal(e, &em)
				if c := string(em["code"]); c != "" && !strings.ContainsAny(c, ".eE") && len(strings.TrimPrefix(c, "-")) <= 18 {
					_ = json.Unmarshal(em["code"], &want.ErrCode)
				}
				if msg := em["message"]; msg != nil && msg[0] == '"' {
					_ = json.Unmarshal(msg, &want.ErrMessage)
				}
			case e != nil && e[0] != 'n':
			case res != nil:
				var list []json.RawMessage
				empty := res[0] == '[' && json.Unmarshal(res, &list) == nil && len(list) == 0
				want = ResponseInfo{Valid: true, ResultNull: string(res) == "null", ResultEmptyList: empty}
			}
		}
		if got != want {
			t.Fatalf("%q: got %+v, want %+v", body, got, want)
		}
	})
}

// FuzzParseBodyLimit: with a batch limit, a body parses exactly as without
// one, unless it is a batch of more elements than the limit, which is
// refused as a whole with -32005.
func FuzzParseBodyLimit(f *testing.F) {
	for _, s := range []string{`[1,2,3]`, `[{"jsonrpc":"2.0","id":1,"method":"m"},[]]`, `{"jsonrpc":"2.0","id":1,"method":"m"}`, `[]`, `[1,`} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, limit uint8) {
		k := int(limit%8) + 1
		want, werr := ParseBody(body)
		got, gerr := ParseBodyLimit(body, k)
		if want.Batch && len(want.Elements) > k {
			if gerr == nil || gerr.Code != CodeLimitExceeded || got.Elements != nil {
				t.Fatalf("batch of %d over a limit of %d: %+v %v", len(want.Elements), k, got, gerr)
			}
			return
		}
		if (werr == nil) != (gerr == nil) || werr != nil && *werr != *gerr || got.Batch != want.Batch || len(got.Elements) != len(want.Elements) {
			t.Fatalf("limit %d changed the parse: %+v %v, want %+v %v", k, got, gerr, want, werr)
		}
	})
}

// twoMethods says whether the object raw gives "method" more than once
// with different values (byte for byte, as the scanner compares them):
// such a request is refused, since nodes disagree on which one it names.
// The map the oracle decodes into keeps only the last.
func twoMethods(t *testing.T, raw []byte) bool {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	var first json.RawMessage
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if key != "method" {
			continue
		}
		if first != nil && !bytes.Equal(first, v) {
			return true
		}
		if first == nil {
			first = v
		}
	}
	return false
}

// Two different ids, or params, are read as the last (as geth reads them),
// and the request goes out with every copy given that value, so that a
// node reading the first answers the same request under the same id.
func TestParseBody_DifferentDuplicateIDsAndParamsGoOutAsTheLast(t *testing.T) {
	for _, tt := range []struct{ body, raw, id, params string }{
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"eth_chainId"}`, `{"jsonrpc":"2.0","id":2,"id":2,"method":"eth_chainId"}`, `2`, ""},
		{`{"jsonrpc":"2.0","id":"a","method":"m","params":[1],"params":[2],"id":"b"}`, `{"jsonrpc":"2.0","id":"b","method":"m","params":[2],"params":[2],"id":"b"}`, `"b"`, `[2]`},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":[1],"params":null}`, `{"jsonrpc":"2.0","id":1,"method":"m","params":null,"params":null}`, `1`, ""},
		{`{"jsonrpc":"2.0","i\u0064":1,"id":2,"method":"m"}`, `{"jsonrpc":"2.0","i\u0064":2,"id":2,"method":"m"}`, `2`, ""},
	} {
		body, perr := ParseBody([]byte(tt.body))
		if perr != nil || body.Elements[0].Req == nil {
			t.Fatalf("%s: %v %v", tt.body, perr, body.Elements[0].Err)
		}
		r := body.Elements[0].Req
		if string(r.Raw) != tt.raw || string(r.ID) != tt.id || string(r.Params) != tt.params || !Valid(r.Raw) {
			t.Errorf("%s:\n got raw %s id %s params %s\nwant raw %s id %s params %s", tt.body, r.Raw, r.ID, r.Params, tt.raw, tt.id, tt.params)
		}
	}
}

// A body nested past encoding/json's 10,000 levels is valid JSON that no
// node decodes: its parse error says so, where "not valid JSON" was wrong.
func TestParseBody_NestedTooDeepSaysSo(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + `}`
	if _, err := ParseBody([]byte(deep)); err == nil || err.Code != CodeParseError || !strings.Contains(err.Message, "nested more than 10000 levels deep") {
		t.Errorf("nested %d deep: %v", MaxDepth+2, err)
	}
	if _, err := ParseBody([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":[[]`)); err == nil || err.Message != "parse error: body is not valid JSON" {
		t.Errorf("truncated: %v", err)
	}
}
