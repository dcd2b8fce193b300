package main

import (
	"fmt"
	"os"
	"sync"
)

// rotatingLog is the console's log file, rotated by size: a session left
// running through a long incident appended to one file for ever (a soak
// wrote about 2 MB an hour). Past max bytes the file becomes path.1, the
// older ones path.2 … path.<backups>, and the oldest is dropped.
// (lumberjack does this, but leaves a goroutine running for every logger
// it ever opened, which no test here may.)
type rotatingLog struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	size    int64
	max     int64
	backups int
}

func openRotatingLog(path string, max int64, backups int) (*rotatingLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &rotatingLog{path: path, f: f, size: info.Size(), max: max, backups: backups}, nil
}

func (r *rotatingLog) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.max {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

func (r *rotatingLog) rotate() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	for i := r.backups; i > 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", r.path, i-1), fmt.Sprintf("%s.%d", r.path, i)) // absent: nothing to move
	}
	if r.backups > 0 {
		os.Rename(r.path, r.path+".1")
	}
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	r.f, r.size = f, 0
	return err
}

func (r *rotatingLog) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
