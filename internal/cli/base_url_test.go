package cli_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/internal/cli"
)

// Every given flag is rewritten to a base URL, an empty one is left empty,
// and a bad one is a usage error naming the command and the flag, which
// leaves the flags after it as they were.
func TestBaseURLs_RewritesGivenFlagsAndNamesTheBadOne(t *testing.T) {
	admin, target, control := "127.0.0.1:8546/", "", "http://127.0.0.1:8545"
	err := cli.BaseURLs("drill", cli.URLFlag{Name: "--admin", Value: &admin}, cli.URLFlag{Name: "--target", Value: &target},
		cli.URLFlag{Name: "--control-target", Value: &control})
	if err != nil || admin != "http://127.0.0.1:8546" || target != "" || control != "http://127.0.0.1:8545" {
		t.Errorf("BaseURLs: %v; --admin %q, --target %q, --control-target %q", err, admin, target, control)
	}
	bad, after := "ftp://user:pw@127.0.0.1:1", "127.0.0.1:2"
	err = cli.BaseURLs("bench", cli.URLFlag{Name: "--target", Value: &bad}, cli.URLFlag{Name: "--admin", Value: &after})
	var u cli.UsageError
	if !errors.As(err, &u) || !strings.HasPrefix(err.Error(), "bench: --target: ") || strings.Contains(err.Error(), "pw") {
		t.Errorf("bad --target: %v (usage error %v); want a usage error naming bench: --target, no password", err, errors.As(err, &u))
	}
	if after != "127.0.0.1:2" {
		t.Errorf("--admin after a bad --target rewritten to %q", after)
	}
}
