package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress draws a one-line progress bar with the time left while a
// comparison runs. A nil *Progress draws nothing.
type Progress struct {
	w     io.Writer
	every time.Duration

	mu     sync.Mutex
	rows   int
	rowLen time.Duration
	cur    int
	name   string
	origin time.Time

	stop chan struct{}
	done chan struct{}
}

// NewProgress draws on w every half second.
func NewProgress(w io.Writer) *Progress { return &Progress{w: w, every: 500 * time.Millisecond} }

// IsTerminal says whether f is a terminal (a character device), where a
// progress bar belongs; a pipe or a file gets none.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *Progress) begin(rows int, rowLen time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.rows, p.rowLen, p.cur = rows, rowLen, -1
	p.mu.Unlock()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				fmt.Fprint(p.w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprint(p.w, "\r\033[K"+p.line(time.Now()))
			}
		}
	}()
}

func (p *Progress) row(i int, name string, origin time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.cur, p.name, p.origin = i, name, origin
	p.mu.Unlock()
}

func (p *Progress) end() {
	if p == nil || p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
}

// line is the bar at now: rows done, the current one, the time left.
func (p *Progress) line(now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur < 0 {
		return "starting…"
	}
	inRow := min(max(now.Sub(p.origin), 0), p.rowLen)
	total := time.Duration(p.rows) * p.rowLen
	done := time.Duration(p.cur)*p.rowLen + inRow
	const width = 30
	filled := 0
	if total > 0 {
		filled = int(float64(width) * float64(done) / float64(total))
	}
	return fmt.Sprintf("[%s%s] row %d/%d %s · %s left", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		p.cur+1, p.rows, p.name, (total - done).Round(time.Second))
}
