package ui

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

var plainClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func postRPC(t testing.TB, url, body string) {
	t.Helper()
	resp, err := plainClient.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
