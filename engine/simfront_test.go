package engine_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

// simFront is an endpoint in front of u, a node or gateway that answers
// some requests its own way: answer gets each request's body first and
// says whether it answered it; the others pass through to u.
func simFront(t *testing.T, u *sim.Upstream, answer func(w http.ResponseWriter, body []byte) bool) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if answer(w, body) {
			return
		}
		resp, err := http.Post(u.URL(), "application/json", bytes.NewReader(body))
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(s.Close)
	return s.URL
}
