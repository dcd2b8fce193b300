package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rpcdash/rpcdash/internal/testutil"
	"go.uber.org/goleak"
)

// gethInstall is the command the skip message and .ci/run use.
const gethInstall = "GOBIN=$HOME/.cache/rpcdash-tools/bin go install github.com/ethereum/go-ethereum/cmd/geth@v1.17.10"

var (
	gethBin   string // path of geth, "" when not found
	ciMustRun = os.Getenv("CI") != ""
)

func TestMain(m *testing.M) {
	gethBin = findGeth()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testutil.RemoveBinaries()
		os.Exit(code)
	}))
}

func findGeth() string {
	if p := os.Getenv("RPCDASH_GETH"); p != "" {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "rpcdash-tools", "bin", "geth")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath("geth"); err == nil {
		return p
	}
	return ""
}

// requireTools stops the test when geth is not available: a skip naming
// the install command locally, a failure under CI. The rpcdash binary is
// built (testutil.Binary: the root module on its own, with the race
// detector when the tests have it, so that every test checks its log for
// race reports) by the first test that starts it.
func requireTools(t *testing.T) {
	t.Helper()
	if gethBin == "" {
		msg := "geth not found ($RPCDASH_GETH, ~/.cache/rpcdash-tools/bin/geth, $PATH); install it with: " + gethInstall
		if ciMustRun {
			t.Fatal("CI is set and these tests must run: " + msg)
		}
		t.Skip(msg)
	}
}
