package cli_test

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/internal/cli"
)

// A token flag's default is not the environment's token (help would show
// it); TokenOf reads the environment only when the flag is not given, and
// a token given, even empty, wins.
func TestTokenOf_EnvironmentOnlyWhenNotGiven(t *testing.T) {
	t.Setenv(cli.AdminTokenEnv, "from-env")
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "from-env"}, {[]string{"--token", "given"}, "given"}, {[]string{"--token="}, ""}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		cli.TokenFlag(fs, "token", "bearer token")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := cli.TokenOf(fs, "token"); got != tc.want {
			t.Errorf("%q: token %q, want %q", tc.args, got, tc.want)
		}
		var help strings.Builder
		fs.SetOutput(&help)
		fs.PrintDefaults()
		if strings.Contains(help.String(), "from-env") || !strings.Contains(help.String(), "$"+cli.AdminTokenEnv) {
			t.Errorf("help:\n%s", help.String())
		}
	}
}
