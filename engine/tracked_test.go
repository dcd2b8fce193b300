package engine

import (
	"testing"
)

// Once Shutdown has begun waiting for the engine's goroutines, none is
// added to that wait: an attempt a cut request still starts is left out
// of it rather than racing sync.WaitGroup's Wait (which may panic).
func TestShutdown_NoGoroutineJoinsTheWaitAfterItBegins(t *testing.T) {
	cfg := Default()
	cfg.Server.Listen, cfg.Server.Admin = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Endpoints = []EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	e, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	if !e.track(1) {
		t.Fatal("a running engine refused to track a goroutine")
	}
	e.wg.Done()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e.track(1) {
		e.wg.Done()
		t.Fatal("after Shutdown a goroutine was added to the wait it had already begun")
	}
}
