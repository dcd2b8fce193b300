package gethtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// gethInstall is the command the skip message and .ci/run use.
const gethInstall = "GOBIN=$HOME/.cache/rpcdash-tools/bin go install github.com/ethereum/go-ethereum/cmd/geth@v1.17.10"

var (
	gethBin    string // path of geth, "" when not found
	rpcdashBin string // path of the rpcdash binary built for this run
	rpcdashErr error  // why rpcdash could not be built
	binDir     string
	ciMustRun  = os.Getenv("CI") != ""
)

func TestMain(m *testing.M) {
	gethBin = findGeth()
	if gethBin != "" {
		dir, err := os.MkdirTemp("", "rpcdash-gethtest-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		binDir = dir
		rpcdashBin, rpcdashErr = buildRpcdash(dir)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
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

// buildRpcdash builds the binary users get: the root module on its own
// (GOWORK=off), so go-ethereum's requirements cannot raise the versions of
// dependencies it shares with rpcdash. Under -race the binary is built with
// the race detector too, and every test checks its log for reports.
func buildRpcdash(dir string) (string, error) {
	out := filepath.Join(dir, "rpcdash")
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %v in the repository root: %v\n%s", args, err, b)
	}
	return out, nil
}

// requireTools stops the test when geth or rpcdash is not available: a skip
// naming the install command locally, a failure under CI.
func requireTools(t *testing.T) {
	t.Helper()
	if gethBin == "" {
		msg := "geth not found ($RPCDASH_GETH, ~/.cache/rpcdash-tools/bin/geth, $PATH); install it with: " + gethInstall
		if ciMustRun {
			t.Fatal("CI is set and these tests must run: " + msg)
		}
		t.Skip(msg)
	}
	if rpcdashErr != nil {
		t.Fatalf("building rpcdash: %v", rpcdashErr)
	}
}
