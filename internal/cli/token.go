package cli

import (
	"flag"
	"os"
)

// AdminTokenEnv is the environment's admin token (server.admin_token),
// which a token flag that is not given falls back on.
const AdminTokenEnv = "RPCDASH_SERVER_ADMIN_TOKEN"

// TokenFlag defines the bearer token flag name. The environment is read
// after parsing (TokenOf), never made the default: the flag package
// prints a default in help and after a usage error.
func TokenFlag(fs *flag.FlagSet, name, usage string) {
	fs.String(name, "", usage+" (default: $"+AdminTokenEnv+")")
}

// TokenOf is the token flag name of a parsed fs: its value when given,
// else AdminTokenEnv's.
func TokenOf(fs *flag.FlagSet, name string) string {
	if Given(fs)[name] {
		return fs.Lookup(name).Value.String()
	}
	return os.Getenv(AdminTokenEnv)
}
