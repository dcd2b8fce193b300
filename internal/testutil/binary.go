package testutil

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const rootModule = "github.com/rpcdash/rpcdash"

var builds struct {
	mu   sync.Mutex
	dir  string
	done map[bool]buildResult // by race
}

type buildResult struct {
	path string
	err  error
}

// Binary builds the rpcdash command once per test process (and race
// setting) and returns its path. It is built as users get it: the root
// module on its own (GOWORK=off, so that the e2e module's requirements
// cannot raise the versions of dependencies the binary shares with it),
// with the race detector when race is true. TestMain calls RemoveBinaries
// once the tests are done.
func Binary(t testing.TB, race bool) string {
	t.Helper()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	r, ok := builds.done[race]
	if !ok {
		r.path, r.err = build(race)
		if builds.done == nil {
			builds.done = map[bool]buildResult{}
		}
		builds.done[race] = r
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.path
}

func build(race bool) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	if builds.dir == "" {
		if builds.dir, err = os.MkdirTemp("", "rpcdash-test-bin-"); err != nil {
			return "", err
		}
	}
	name := "rpcdash"
	args := []string{"build"}
	if race {
		name, args = "rpcdash-race", append(args, "-race")
	}
	out := filepath.Join(builds.dir, name)
	args = append(args, "-o", out, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s in %s: %v\n%s", strings.Join(args, " "), root, err, b)
	}
	return out, nil
}

// RemoveBinaries deletes what Binary built.
func RemoveBinaries() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
		builds.dir, builds.done = "", nil
	}
}

// RepoRoot is the directory of the rpcdash module's go.mod, found from the
// working directory upwards (a package's tests run in its directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isRootModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", rootModule)
		}
		dir = parent
	}
}

func isRootModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == rootModule
		}
	}
	return false
}
