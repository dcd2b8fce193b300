package cli

import "flag"

// Given names the flags set on the command line, so that a value given
// (0 included) is told from a default and is never replaced by one.
func Given(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}
