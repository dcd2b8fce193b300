package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// idleCutUpstream is a JSON-RPC upstream that closes a keep-alive
// connection the way a server closing it as idle does just as a request
// goes out on it: it reads the request whole, then closes the connection
// without a byte of answer. It does so to the next request of a method on
// a reused connection once armed for it (cutNext), and to any request on a
// connection idle for idleLimit or longer (0: never), as a server whose
// keep-alive timeout is a little longer would. Every other request is
// answered "0x1". A batch counts under the method "batch".
type idleCutUpstream struct {
	srv       *httptest.Server
	idleLimit time.Duration
	mu        sync.Mutex
	cut       map[string]int // requests of a method on reused connections left to cut
	// received, answered and wasCut count by method.
	received, answered, wasCut map[string]int
	keyHeaders                 int // requests that carried an idempotency key header
}

// servedConn is what the upstream knows of one of its connections.
type servedConn struct {
	served     int
	lastAnswer time.Time
}

type servedConnKey struct{}

func newIdleCutUpstream(t *testing.T, idleLimit time.Duration) *idleCutUpstream {
	u := &idleCutUpstream{idleLimit: idleLimit, cut: map[string]int{}, received: map[string]int{}, answered: map[string]int{}, wasCut: map[string]int{}}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	u.srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, servedConnKey{}, new(servedConn))
	}
	u.srv.Start()
	t.Cleanup(u.srv.Close)
	return u
}

func (u *idleCutUpstream) URL() string { return u.srv.URL }

// cutNext arms the upstream to cut the next request of method that comes
// on a reused connection.
func (u *idleCutUpstream) cutNext(method string) {
	u.mu.Lock()
	u.cut[method]++
	u.mu.Unlock()
}

// counts returns how many requests of method were received, answered and
// cut.
func (u *idleCutUpstream) counts(method string) (received, answered, cut int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.received[method], u.answered[method], u.wasCut[method]
}

// keyHeadersSeen is how many requests carried an X-Idempotency-Key header.
func (u *idleCutUpstream) keyHeadersSeen() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.keyHeaders
}

func (u *idleCutUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	conn := r.Context().Value(servedConnKey{}).(*servedConn)
	var calls []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	batch := bytes.HasPrefix(bytes.TrimSpace(body), []byte("["))
	if !batch {
		body = append(append([]byte("["), body...), ']')
	}
	if json.Unmarshal(body, &calls) != nil || len(calls) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	method := calls[0].Method
	if batch {
		method = "batch"
	}
	u.mu.Lock()
	u.received[method]++
	if _, ok := r.Header["X-Idempotency-Key"]; ok {
		u.keyHeaders++
	}
	conn.served++
	reused := conn.served > 1
	idle := reused && u.idleLimit > 0 && time.Since(conn.lastAnswer) >= u.idleLimit
	cut := idle || reused && u.cut[method] > 0
	switch {
	case idle:
		u.wasCut[method]++
	case cut:
		u.cut[method]--
		u.wasCut[method]++
	default:
		u.answered[method]++
	}
	u.mu.Unlock()
	if cut {
		nc, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			nc.Close()
		}
		return
	}
	answers := make([]json.RawMessage, len(calls))
	for i, c := range calls {
		answers[i], _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.ID, "result": "0x1"})
	}
	w.Header().Set("Content-Type", "application/json")
	if batch {
		json.NewEncoder(w).Encode(answers)
	} else {
		w.Write(answers[0])
	}
	u.mu.Lock()
	conn.lastAnswer = time.Now()
	u.mu.Unlock()
}
