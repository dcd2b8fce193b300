package ui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The attached console polls /v1/status four times a second: it asks for
// the document compact, not indented for a person (on a 16-endpoint pool
// indenting doubled the instance's cost of every poll).
func TestRemote_AsksForTheStatusCompact(t *testing.T) {
	asked := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/status" {
			select {
			case asked <- r.URL.RawQuery:
			default:
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"endpoints":[]}`)
	}))
	defer srv.Close()
	remote, err := NewRemote(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	if _, err := remote.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if q := <-asked; q != "compact=1" {
		t.Fatalf("GET /v1/status?%s, want compact=1", q)
	}
}
