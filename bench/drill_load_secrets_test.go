package bench_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/bench"
)

// The drill's own reads name what failed in its report ("the first: …"):
// Go's error quoted the --target URL whole ("Post \"http://…/v2/KEY\":
// EOF") where the drill's other messages show it REDACTED.
func TestDrillLoad_FailedReadShowsNoTargetSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	defer srv.Close()
	got := bench.DrillReadError(context.Background(), srv.URL+"/v2/SECRETKEY123?apikey=SECRET456")
	if got == "" || strings.Contains(got, "SECRETKEY123") || strings.Contains(got, "SECRET456") || !strings.Contains(got, "REDACTED") {
		t.Errorf("failed read says %q; want the failure with the URL's secrets REDACTED", got)
	}
}
