package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// scriptedUpstream starts a JSON-RPC endpoint on loopback for a test that
// needs answers no sim mode gives: answer may write the reply to a call
// (its id and method) and says whether it did; every other call is
// answered "0x1".
func scriptedUpstream(t *testing.T, answer func(w http.ResponseWriter, id json.RawMessage, method string) bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if answer(w, req.ID, req.Method) {
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, req.ID)
	}))
	t.Cleanup(srv.Close)
	return srv
}
