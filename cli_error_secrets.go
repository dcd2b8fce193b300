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
func shownError(args []string, err error) string {
	return engine.NewTextScrubber(argURLs(args)).Scrub(err.Error())
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
