package engine

import (
	"net/http"
	"time"
)

// closeUnreadBody prepares an answer given without reading r's body (a
// refusal, the health answer). Before writing such an answer net/http
// reads the body to its end, to keep the connection for the next request,
// and on the RPC port no deadline bounds that read: a client that stalled
// mid-body got no answer, and held its connection for as long as it liked.
// The connection is closed after the answer instead, so net/http writes it
// at once; the read that still looks for the body's end, to close without
// resetting, has readTimeout.
func closeUnreadBody(w http.ResponseWriter, r *http.Request, readTimeout time.Duration) {
	if r.ContentLength == 0 {
		return // no body: the connection may serve the next request
	}
	w.Header().Set("Connection", "close")
	// A ResponseWriter without a connection (a test recorder) has no
	// deadline to set.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(readTimeout))
}
