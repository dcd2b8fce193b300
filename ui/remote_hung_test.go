package ui

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// An admin API that takes the connection and never answers: the refresh
// fails within its bound and the error says so in words.
func TestRemote_HungInstanceSaysItDidNotAnswerInTime(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	r, err := NewRemote("http://"+ln.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = r.Drain(ctx, "alpha")
	if err == nil || !strings.HasSuffix(err.Error(), "did not answer in time") || strings.Contains(err.Error(), "deadline") {
		t.Fatalf("error %v", err)
	}
}
