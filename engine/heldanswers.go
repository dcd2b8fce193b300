package engine

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// An answer is held whole until its client has taken it, and a client
// that stops reading holds it for server.write_timeout: 40 clients not
// reading 15 MB answers held 617 MB for 30 s, and nothing bounded how many
// could. While the answers being handed over pass
// server.max_held_answer_bytes, one whose client has taken nothing of it
// for answerStall is cut (its connection closed), the longest stalled
// first and only as many as bring the rest within the bound, as servers
// bound slow readers when memory is short. A client that reads is never
// cut, and below the bound none is.

const (
	// minHeldAnswer: smaller answers fit in the sockets' buffers, and
	// are handed over without being watched.
	minHeldAnswer = 64 << 10
	// answerChunk is what one write hands over: progress is seen per chunk.
	answerChunk = 64 << 10
	// answerStall is how long a client may take nothing while the bound
	// is passed.
	answerStall = 2 * time.Second
)

// heldAnswers watches the answers of minHeldAnswer or more being handed
// to clients.
type heldAnswers struct {
	limit  int64
	held   atomic.Int64 // their bytes, whole
	count  atomic.Int64
	mu     sync.Mutex
	writes map[*answerWrite]struct{}
	// cuts and cutBytes since the last event, reported at most once a
	// second (lastReport): the watch loop's own, as reap is.
	cuts       int
	cutBytes   int64
	lastReport time.Time
}

// answerWrite hands one answer to its client in chunks.
type answerWrite struct {
	w    http.ResponseWriter
	size int64
	left atomic.Int64
	// The watcher's own, under heldAnswers.mu.
	seenLeft   int64
	stillSince time.Time
	cut        bool
}

func newHeldAnswers(limit int64) *heldAnswers {
	return &heldAnswers{limit: limit, writes: map[*answerWrite]struct{}{}}
}

// begin watches an answer of size bytes about to be written to w; nil,
// and nothing watched, when it is small. end must follow before the
// handler returns: the watcher touches w only between the two.
func (h *heldAnswers) begin(w http.ResponseWriter, size int) *answerWrite {
	if size < minHeldAnswer {
		return nil
	}
	a := &answerWrite{w: w, size: int64(size), seenLeft: int64(size), stillSince: time.Now()}
	a.left.Store(int64(size))
	h.mu.Lock()
	h.writes[a] = struct{}{}
	h.mu.Unlock()
	h.count.Add(1)
	h.held.Add(a.size)
	return a
}

func (h *heldAnswers) end(a *answerWrite) {
	if a == nil {
		return
	}
	h.mu.Lock()
	delete(h.writes, a)
	h.mu.Unlock()
	h.count.Add(-1)
	h.held.Add(-a.size)
}

// Write hands p over a chunk at a time, counting what the client took.
func (a *answerWrite) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n, err := a.w.Write(p[:min(len(p), answerChunk)])
		written += n
		a.left.Add(-int64(n))
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// writeAnswer writes body to w, watched by h when it is large.
func (h *heldAnswers) writeAnswer(w http.ResponseWriter, body []byte) {
	a := h.begin(w, len(body))
	if a == nil {
		w.Write(body)
		return
	}
	defer h.end(a)
	a.Write(body)
}

// reap cuts, while the bound is passed, answers whose clients took
// nothing of them for answerStall, the longest stalled first, until what
// is left is within the bound. It returns the event to log, once a second
// of such cuts ("" for none).
func (h *heldAnswers) reap(now time.Time) string {
	if h.count.Load() == 0 && h.cuts == 0 {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// An answer cut is held until its handler has returned.
	excess := h.held.Load() - h.limit
	var stalled []*answerWrite
	for a := range h.writes {
		if a.cut {
			excess -= a.size
			continue
		}
		if left := a.left.Load(); left != a.seenLeft {
			a.seenLeft, a.stillSince = left, now
			continue
		}
		if a.seenLeft > 0 && now.Sub(a.stillSince) >= answerStall {
			stalled = append(stalled, a)
		}
	}
	if excess > 0 && len(stalled) > 0 {
		slices.SortFunc(stalled, func(x, y *answerWrite) int { return x.stillSince.Compare(y.stillSince) })
		for _, a := range stalled {
			if excess <= 0 {
				break
			}
			// Unblocks the write, which fails; the handler returns and
			// net/http closes the connection.
			_ = http.NewResponseController(a.w).SetWriteDeadline(time.Unix(1, 0))
			a.cut = true
			excess -= a.size
			h.cuts++
			h.cutBytes += a.seenLeft
		}
	}
	if h.cuts == 0 || now.Sub(h.lastReport) < time.Second {
		return ""
	}
	answers := "answers"
	if h.cuts == 1 {
		answers = "answer"
	}
	msg := fmt.Sprintf("cut %d %s (%.1f MiB not taken) to clients that had read nothing of them for %s while the answers being handed over held more than server.max_held_answer_bytes (%d bytes)",
		h.cuts, answers, float64(h.cutBytes)/(1<<20), answerStall, h.limit)
	h.cuts, h.cutBytes, h.lastReport = 0, 0, now
	return msg
}
