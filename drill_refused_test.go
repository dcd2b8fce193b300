package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A drill refused because another holds the instance's lease says so
// alone: before, `drill: error fault against …` came first on stdout,
// as if a fault were being injected, and the refusal after it on stderr.
func TestDrill_RefusalForAnothersLeaseComesFirst(t *testing.T) {
	var posted []string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posted = append(posted, r.Method+" "+r.URL.Path)
		if r.Method == http.MethodPost && r.URL.Path == "/v1/drill" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"a drill is running: rpcdash drill (latency fault, pid 4242 on box), since 12:00:01; its lease ends at 12:00:16 (in 9s) unless it renews it"}`))
			return
		}
		http.Error(w, "not expected", http.StatusTeapot)
	}))
	defer admin.Close()
	var out, errb bytes.Buffer
	code := run([]string{"drill", "--admin", admin.URL, "--target", "http://127.0.0.1:1", "--mode", "error"}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout before the refusal:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "another drill is running against this instance") || !strings.Contains(errb.String(), "pid 4242") {
		t.Errorf("stderr:\n%s", errb.String())
	}
	if len(posted) != 1 {
		t.Errorf("calls %v: want only the lease asked for", posted)
	}
}
