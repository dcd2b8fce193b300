package engine

import (
	"fmt"
	"testing"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// clockedEngine is an engine on a test clock over n endpoints named a, b,
// c … at unreachable loopback ports, for tests that drive its state
// directly; mut, if any, changes the config first. It closes with the test.
func clockedEngine(t *testing.T, n int, mut func(*Config)) (*Engine, *testutil.Clock) {
	t.Helper()
	clock := testutil.NewClock(testutil.Epoch)
	cfg := Default()
	for i := range n {
		cfg.Endpoints = append(cfg.Endpoints, EndpointConfig{Name: string(rune('a' + i)), URL: fmt.Sprintf("http://127.0.0.1:%d", i+1)})
	}
	if mut != nil {
		mut(&cfg)
	}
	e, err := New(cfg, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, clock
}
