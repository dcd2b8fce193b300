package cli_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/rpcdash/rpcdash/internal/cli"
)

// A usage error reads as its text, is found by errors.As however wrapped,
// and keeps what it wraps reachable.
func TestUsageError_FoundThroughWrapsAndKeepsItsCause(t *testing.T) {
	err := fmt.Errorf("status: %w", cli.Usage(fs.ErrNotExist))
	var u cli.UsageError
	if !errors.As(err, &u) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.As = %v, errors.Is(ErrNotExist) = %v; want both", errors.As(err, &u), errors.Is(err, fs.ErrNotExist))
	}
	err = cli.Usagef("drill: --rate %v: want (0, 200]", 0.0)
	if !errors.As(err, &u) || err.Error() != "drill: --rate 0: want (0, 200]" {
		t.Errorf("Usagef: %q, usage error %v", err, errors.As(err, &u))
	}
	if errors.As(errors.New("plain"), &u) {
		t.Error("a plain error reads as a usage error")
	}
}
