package main

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// A host's labels below its registrable domain may be a provider's only
// credential: the commands' refusals named the host whole right after the
// URL they had shown redacted ("--target https://REDACTED.infura.io/REDACTED:
// host \"abc123secretlabel.infura.io\" is not a loopback address").
func TestCLI_ARefusedURLsHostIsShownRedacted(t *testing.T) {
	const label, key = "abc123secretlabel", "KEYINPATH0042"
	for _, args := range [][]string{
		{"bench", "--target", "https://" + label + ".infura.io/v3/" + key, "--count", "5", "--warmup", "0s"},
		{"bench", "--target", "http://127.0.0.1:9", "--admin", "https://" + label + ".infura.io/" + key},
		{"drill", "--admin", "http://127.0.0.1:9", "--target", "https://" + label + ".infura.io/v3/" + key},
	} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		got := out.String() + errb.String()
		if code != 1 || !strings.Contains(got, "REDACTED.infura.io") {
			t.Errorf("%v: exit %d, want 1 and the host shown redacted:\n%s", args, code, got)
		}
		if strings.Contains(got, label) || strings.Contains(got, key) {
			t.Errorf("%v: a secret leaked:\n%s", args, got)
		}
	}
}

// Go's own errors quote the host a command dialled; the printed error
// scrubs every URL of the command line from them, given as a URL or as a
// bare host:port, and leaves every other word (a config file's name) alone.
func TestCLI_ACommandsErrorIsScrubbedOfItsURLsSecrets(t *testing.T) {
	const label = "abc123secretlabel"
	for _, admin := range []string{label + ".quiknode.pro:443", "https://" + label + ".quiknode.pro/", "--admin=https://u:pw12345@" + label + ".quiknode.pro/"} {
		args := []string{"status", "--admin", admin}
		if strings.HasPrefix(admin, "--") {
			args = []string{"status", admin}
		}
		msg := "dial tcp: lookup " + label + ".quiknode.pro on 127.0.0.53:53: no such host"
		if strings.Contains(admin, "pw12345") {
			msg += " (password pw12345)"
		}
		got := shownError(args, errors.New(msg))
		if strings.Contains(got, label) || strings.Contains(got, "pw12345") || !strings.Contains(got, "lookup REDACTED.quiknode.pro on 127.0.0.53:53") {
			t.Errorf("%v: %s", args, got)
		}
	}
	msg := "config.toml: endpoints[0].url: a value is required (127.0.0.1:8545)"
	if got := shownError([]string{"serve", "--config", "config.toml", "--log-level", "debug"}, errors.New(msg)); got != msg {
		t.Errorf("an error without secrets changed: %s", got)
	}
}

// A URL flag refused for its user info says so in its own words whatever
// the user is called: scrubbing the whole message took "user" for the
// secret it was and printed "carries REDACTED info (REDACTED:password@)".
// The secrets themselves still never appear.
func TestRun_RefusedUserInfoKeepsItsOwnWords(t *testing.T) {
	for _, args := range [][]string{
		{"status", "--admin", "http://user:pw@127.0.0.1:19699/x?key=abc"},
		{"status", "--admin", "http://carries:password@127.0.0.1:19699/x?key=which"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
		msg, _, _ := strings.Cut(errb.String(), "\n")
		if !strings.Contains(msg, "carries user info (user:password@), which rpcdash never sends") {
			t.Errorf("%v: %s", args, msg)
		}
		u, _ := url.Parse(args[2])
		for _, secret := range []string{u.User.String() + "@", "key=" + u.Query().Get("key"), "/x"} {
			if strings.Contains(errb.String(), secret) {
				t.Errorf("%v: %q shown: %s", args, secret, msg)
			}
		}
	}
}
