package cli

import "github.com/rpcdash/rpcdash/engine"

// URLFlag is a flag that names a running rpcdash (or a JSON-RPC URL): its
// name as the error shows it ("--admin") and the parsed value.
type URLFlag struct {
	Name  string
	Value *string
	// JSONRPC marks a URL that JSON-RPC calls are sent to, not a base
	// that paths are added to: its query is kept, since a provider's key
	// may be there (?apikey=…).
	JSONRPC bool
}

// BaseURLs rewrites each given (non-empty) flag to engine.BaseURL's form;
// the first that is not a URL or host:port is a usage error naming
// "command: --flag".
func BaseURLs(command string, flags ...URLFlag) error {
	for _, f := range flags {
		if *f.Value == "" {
			continue
		}
		parse := engine.BaseURL
		if f.JSONRPC {
			parse = engine.TargetURL
		}
		base, err := parse(command+": "+f.Name, *f.Value)
		if err != nil {
			return Usage(err)
		}
		*f.Value = base
	}
	return nil
}
