package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An instance with server.admin_token, attached without --token (or with
// a wrong one): the header says what to do, whole, not "… is …" cut.
func TestRemote_Unauthorized401SaysToGiveTheToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"a valid bearer token (server.admin_token) is required"}`))
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ token, want string }{
		{"", "HTTP 401: needs --token (its server.admin_token)"},
		{"wrong", "HTTP 401: --token is not its server.admin_token"},
	} {
		r, err := NewRemote(srv.URL, tc.token)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		if err := r.Drain(context.Background(), "alpha"); err == nil || err.Error() != tc.want {
			t.Fatalf("token %q: drain error %v, want %q", tc.token, err, tc.want)
		}
		m := New(Options{Backend: r, Location: time.UTC, Source: Source{Attached: srv.URL}})
		mm, _ := m.Update(sizeMsg(120, 36))
		m = mm.(Model)
		m = settle(t, m, m.refresh())
		if v := m.View(); !strings.Contains(v, tc.want) {
			t.Fatalf("token %q: header:\n%s", tc.token, v)
		}
	}
}
