package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A server at --admin that answers 200 but is not rpcdash (a web page,
// another API's JSON) is an error naming it, exit 1, in every format: the
// table printed "0/0 endpoints routable" for {"hello":1} and exited 0,
// --format json relayed the page as the status, and an HTML page gave
// "invalid character '<' looking for beginning of value", naming nothing.
func TestStatus_AnotherServersAnswerIsAnErrorNotAnEmptyPool(t *testing.T) {
	for _, answer := range []string{`<html>hi</html>`, `{"hello":1}`, `[]`, `null`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(answer))
		}))
		for _, format := range []string{"table", "csv", "json"} {
			out, errOut, code := runStatus(t, "--admin", srv.URL, "--format", format)
			if code != 1 || out != "" || !strings.Contains(errOut, "no rpcdash admin API at "+srv.URL) ||
				!strings.Contains(errOut, "not an rpcdash status") {
				t.Errorf("answer %s, --format %s: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, an error naming %s",
					answer, format, code, out, errOut, srv.URL)
			}
		}
		srv.Close()
	}
}

// A web server's error page at --admin (HTTP 404 with HTML) is named as
// not rpcdash, with the URL, not dumped: it printed "admin API: HTTP 404:
// <!DOCTYPE HTML>?<html lang=…". An rpcdash's own error (JSON) still
// shows its text.
func TestStatus_AnotherServersErrorPageIsNamedNotDumped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<!DOCTYPE HTML>\n<html><body><h1>Error response</h1></body></html>"))
	}))
	defer srv.Close()
	_, errOut, code := runStatus(t, "--admin", srv.URL)
	if want := "rpcdash: no rpcdash admin API at " + srv.URL + ": HTTP 404, not an rpcdash answer\n"; code != 1 || errOut != want {
		t.Errorf("exit %d, stderr %q; want exit 1, %q", code, errOut, want)
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"a valid bearer token (server.admin_token) is required"}`))
	}))
	defer api.Close()
	if _, errOut, code := runStatus(t, "--admin", api.URL); code != 1 || !strings.Contains(errOut, "admin API: HTTP 401: a valid bearer token") {
		t.Errorf("an rpcdash's own error: exit %d, stderr %q", code, errOut)
	}
}

// --admin given the JSON-RPC port (its GET answers the pool's health)
// says so: a likely slip, 8545 for 8546.
func TestStatus_TheJSONRPCPortAtAdminIsNamedAsSuch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"ok":true,"routable":2,"endpoints":2,"panic":false}`))
	}))
	defer srv.Close()
	_, errOut, code := runStatus(t, "--admin", srv.URL)
	if code != 1 || !strings.Contains(errOut, "JSON-RPC port") || !strings.Contains(errOut, "server.admin") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming the JSON-RPC port and server.admin", code, errOut)
	}
}

// The JSON-RPC port at --admin while its pool has nothing routable answers
// its health with 503 ({"ok":false,…}), which is named as the JSON-RPC
// port too: it printed "admin API: HTTP 503: {"ok":false,"routable":0,…}",
// naming neither the URL nor the slip, when the pool was drained.
func TestStatus_TheJSONRPCPortAtAdminIsNamedAsSuchWhenNothingIsRoutable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"ok":false,"routable":0,"endpoints":3,"panic":false}`))
	}))
	defer srv.Close()
	_, errOut, code := runStatus(t, "--admin", srv.URL)
	if code != 1 || !strings.Contains(errOut, "no rpcdash admin API at "+srv.URL) ||
		!strings.Contains(errOut, "JSON-RPC port") || !strings.Contains(errOut, "server.admin") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming %s as the JSON-RPC port and server.admin", code, errOut, srv.URL)
	}
}

// A JSON-RPC node at --admin (a sim, geth: GET answered 405 with a
// JSON-RPC error object) is named as not rpcdash, with the URL: it printed
// "admin API: HTTP 405: {"jsonrpc":"2.0",…,"message":"use POST"}}",
// naming neither. rpcdash's own 503 past server.max_conns, a JSON-RPC
// error too, keeps its text.
func TestStatus_AJSONRPCNodeAtAdminIsNamedAsNotRpcdash(t *testing.T) {
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"use POST"}}`))
	}))
	defer node.Close()
	_, errOut, code := runStatus(t, "--admin", node.URL)
	if want := "rpcdash: no rpcdash admin API at " + node.URL + ": HTTP 405, not an rpcdash answer\n"; code != 1 || errOut != want {
		t.Errorf("exit %d, stderr %q; want exit 1, %q", code, errOut, want)
	}
	full := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"too many connections: server.max_conns (4096) reached; try again shortly"}}`))
	}))
	defer full.Close()
	if _, errOut, code := runStatus(t, "--admin", full.URL); code != 1 || !strings.Contains(errOut, "HTTP 503") || !strings.Contains(errOut, "server.max_conns") {
		t.Errorf("rpcdash's connection limit: exit %d, stderr %q; want its text kept", code, errOut)
	}
}

// An instance that takes the connection and never answers (stopped with
// SIGSTOP, overloaded) was reported as "no rpcdash admin API at …: context
// deadline exceeded", the words of a closed port: an operator was told the
// instance was not there when it was stalled.
func TestStatus_AnAdminAPIThatDoesNotAnswerIsSaidToBeStalledNotAbsent(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	_, errOut, code := runStatus(t, "--admin", srv.URL)
	if code != 1 || !strings.Contains(errOut, "admin API at "+srv.URL+" did not answer within 5s") || strings.Contains(errOut, "no rpcdash admin API") {
		t.Fatalf("exit %d, stderr %q; want exit 1 and the admin API said not to answer in time", code, errOut)
	}
}
