package main

import (
	"net"
	"strconv"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
)

// shownError is a command's error as it is printed: the secrets of every
// URL the command line gave (--target, --admin, --attach, as a URL or a
// bare host:port) REDACTED wherever the error quotes them. Each message
// shows its URL redacted, but Go's own errors repeat the host ("lookup
// abc123secret.quiknode.pro: no such host"), and a message that names the
// host alone must not undo what the redacted URL beside it hid.
//
// The parts that are an *engine.ShownError (a URL flag refused, its URL
// shown redacted) are kept as they are: scrubbed, their own words went
// when a secret was one of them (a user named "user").
func shownError(args []string, err error) string {
	text := err.Error()
	var kept []string
	eachError(err, func(e error) {
		if se, ok := e.(*engine.ShownError); ok && se.Text != "" {
			kept = append(kept, se.Text)
		}
	})
	marks := make([]string, len(kept))
	for i, k := range kept {
		marks[i] = "\x01" + strings.Repeat("\x02", i+1) + "\x01" // no secret of a URL is made of these
		text = strings.ReplaceAll(text, k, marks[i])
	}
	text = engine.NewTextScrubber(argURLs(args)).Scrub(text)
	for i, k := range kept {
		text = strings.ReplaceAll(text, marks[i], k)
	}
	return text
}

// eachError calls f on err and every error it wraps.
func eachError(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		eachError(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			eachError(e, f)
		}
	}
}

// argURLs are the arguments (or flags' values, --flag=VALUE) that name a
// URL: with a scheme, or a bare host:port with or without a path. Other
// words are left out: a file name or a format is no secret, and scrubbing
// it as a URL's path would mangle the message.
func argURLs(args []string) []string {
	var urls []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			_, v, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = v
		}
		if strings.Contains(a, "://") {
			urls = append(urls, a)
			continue
		}
		hostport, _, _ := strings.Cut(a, "/")
		if host, port, err := net.SplitHostPort(hostport); err == nil && host != "" && !strings.ContainsAny(a, " \t") {
			if _, err := strconv.Atoi(port); err == nil {
				urls = append(urls, "http://"+a)
			}
		}
	}
	return urls
}
