package engine

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A non-loopback RPC port needs server.allow_remote, and is warned about.
// (The test binds nothing: an open port is not something a test should make.)
func TestRemote_NonLoopbackListenNeedsAllowRemoteAndWarns(t *testing.T) {
	cfg := Default()
	cfg.Endpoints = []EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	cfg.Server.Listen = "0.0.0.0:8545"
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "server.allow_remote") {
		t.Fatalf("non-loopback listen without allow_remote: %v", err)
	}
	cfg.Server.AllowRemote = true
	var logs bytes.Buffer
	e, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e.warnIfRemote("0.0.0.0:8545")
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "server.allow_remote") {
		t.Fatalf("no warning: %s", logs.String())
	}
	for _, loop := range []string{"127.0.0.1:0", "localhost:8545", "[::1]:8545"} {
		logs.Reset()
		cfg.Server.Listen, cfg.Server.AllowRemote = loop, false
		e, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("%s: %v", loop, err)
		}
		e.warnIfRemote(loop)
		if logs.Len() != 0 {
			t.Fatalf("%s warned: %s", loop, logs.String())
		}
	}
}
