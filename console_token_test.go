package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/internal/cli"
)

// Attached with RPCDASH_SERVER_ADMIN_TOKEN and no --token, a wrong token
// read "HTTP 401: --token is not its server.admin_token" (measured on
// the binary against a serve whose admin listens off loopback): the
// operator gave no --token. The error names where the token came from,
// never the token.
func TestConsole_AttachedWrongTokenNamesWhereItCameFrom(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"a valid bearer token (server.admin_token) is required"}`))
	}))
	t.Cleanup(srv.Close)
	t.Setenv(cli.AdminTokenEnv, "wrongFromEnv")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--attach", srv.URL}, "HTTP 401: " + cli.AdminTokenEnv + " is not its token"},
		{[]string{"--attach", srv.URL, "--token", "wrongFromFlag"}, "HTTP 401: --token is not its server.admin_token"},
	} {
		f, err := parseConsoleFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		r, err := attachRemote(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		err = r.Drain(context.Background(), "alpha")
		if err == nil || err.Error() != tc.want || strings.Contains(err.Error(), "wrongFrom") {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
