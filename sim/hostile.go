package sim

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"
)

// Hostile modes: an upstream that attacks the client instead of failing
// politely, to keep the router's bounds honest.
const (
	// ModeHugeAnswer answers 200 with a valid JSON-RPC result of
	// about HugeBytes, streamed without Content-Length.
	ModeHugeAnswer Mode = "huge_answer"
	// ModeTrickle sends the normal answer one byte every
	// TrickleInterval, with its Content-Length up front.
	ModeTrickle Mode = "trickle"
	// ModeMalformedStatus answers with a status line holding JunkBytes of
	// junk (escape sequences, invalid UTF-8) in place of a status code.
	ModeMalformedStatus Mode = "malformed_status"
)

// Defaults of the hostile modes' sizes and pace.
const (
	DefaultHugeBytes       = 200 << 20
	DefaultTrickleInterval = 100 * time.Millisecond
	DefaultJunkBytes       = 1 << 20
)

type hostileSettings struct {
	hugeBytes       int64
	trickleInterval time.Duration
	junkBytes       int
}

func (h hostileSettings) withDefaults() hostileSettings {
	if h.hugeBytes <= 0 {
		h.hugeBytes = DefaultHugeBytes
	}
	if h.trickleInterval <= 0 {
		h.trickleInterval = DefaultTrickleInterval
	}
	if h.junkBytes <= 0 {
		h.junkBytes = DefaultJunkBytes
	}
	return h
}

// serveHostile answers in one of the hostile modes; it reports false for a
// mode that is not one.
func (u *Upstream) serveHostile(w http.ResponseWriter, r *http.Request, mode Mode, s settings, reqs []request, batch bool) bool {
	h := s.hostile.withDefaults()
	switch mode {
	case ModeHugeAnswer:
		u.serveHuge(w, r.Context(), reqs, h.hugeBytes)
	case ModeTrickle:
		u.serveTrickle(w, r.Context(), encodeResponses(reqs, batch, u.answer), h.trickleInterval, len(reqs))
	case ModeMalformedStatus:
		u.serveMalformedStatus(w, h.junkBytes)
	default:
		return false
	}
	return true
}

var hugeChunk = bytes.Repeat([]byte("f"), 64<<10)

// serveHuge streams {"jsonrpc":"2.0","id":ID,"result":"0xfff…"} of about n
// bytes, without ever holding more than a chunk of it.
func (u *Upstream) serveHuge(w http.ResponseWriter, ctx context.Context, reqs []request, n int64) {
	id := nullID
	if len(reqs) > 0 && reqs[0].ID != nil {
		id = reqs[0].ID
	}
	u.countStatus(http.StatusOK)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":"0x`
	if _, err := w.Write([]byte(head)); err != nil {
		return
	}
	for left := n - int64(len(head)) - 2; left > 0; left -= int64(len(hugeChunk)) {
		if ctx.Err() != nil || u.isClosing() {
			return
		}
		if _, err := w.Write(hugeChunk[:min(left, int64(len(hugeChunk)))]); err != nil {
			return
		}
	}
	w.Write([]byte(`"}`))
}

// serveTrickle sends body, the answer to calls JSON-RPC requests, one byte
// per interval.
func (u *Upstream) serveTrickle(w http.ResponseWriter, ctx context.Context, body []byte, interval time.Duration, calls int) {
	u.countStatus(http.StatusOK)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	t := time.NewTicker(interval)
	defer t.Stop()
	for i := range body {
		if _, err := w.Write(body[i : i+1]); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			u.countCancelled(calls)
			return
		case <-u.closing:
			return
		}
	}
}

// serveMalformedStatus writes a status line whose code is n bytes of junk
// that a careless client would quote into its error, then closes.
func (u *Upstream) serveMalformedStatus(w http.ResponseWriter, n int) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	u.countStatus(0)
	bw := bufio.NewWriterSize(buf, 64<<10)
	bw.WriteString("HTTP/1.1 2")
	junk := []byte("\x1b[31mJUNK\x1b[0m\xff\xfe\x07")
	for left := n; left > 0; left -= len(junk) {
		bw.Write(junk[:min(left, len(junk))])
	}
	bw.WriteString(" OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	bw.Flush()
	buf.Flush()
}

func (u *Upstream) isClosing() bool {
	select {
	case <-u.closing:
		return true
	default:
		return false
	}
}
