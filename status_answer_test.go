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
