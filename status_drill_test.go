package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// `rpcdash status` says when a drill runs against the instance (GET
// /v1/drill): its fault shows in the table, but not that it is a drill's,
// nor whose. An instance without GET /v1/drill has its status printed all
// the same.
func TestStatus_SaysADrillRuns(t *testing.T) {
	var drill atomic.Value // the handler's goroutine reads it
	drill.Store(`{"running":true,"holder":"rpcdash drill (error fault, pid 7 on box)","since":"2026-12-04T12:00:01Z","expires":"2026-12-04T12:00:16Z"}`)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/status":
			w.Write([]byte(`{"endpoints":[{"name":"alpha"}]}`))
		case "/v1/drill":
			d := drill.Load().(string)
			if d == "" {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte(d))
		default:
			http.NotFound(w, r)
		}
	}))
	defer admin.Close()
	status := func() string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run([]string{"status", "--admin", admin.URL}, &out, &errb); code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		return out.String()
	}
	const want = "drill running: rpcdash drill (error fault, pid 7 on box), since 12:00:01; its lease ends at 12:00:16 unless it renews it\n"
	if out := status(); !strings.HasSuffix(out, want) {
		t.Errorf("a drill running, the last line is not %q:\n%s", want, out)
	}
	drill.Store(`{"running":false}`)
	if out := status(); strings.Contains(out, "drill") || !strings.Contains(out, "alpha") {
		t.Errorf("no drill:\n%s", out)
	}
	drill.Store("")
	if out := status(); strings.Contains(out, "drill") || !strings.Contains(out, "alpha") {
		t.Errorf("an instance without GET /v1/drill:\n%s", out)
	}
}
