// Package cli holds what main's commands and `rpcdash bench` share about
// a command line: the error that makes rpcdash exit 2 (UsageError), the
// reading of flags that name a running rpcdash (BaseURLs) and of admin
// token flags (TokenFlag, TokenOf). It imports the standard library and
// engine only, so that bench and main may both import it.
package cli

import "fmt"

// UsageError is a command line that cannot run as given (a flag's value, a
// stray argument): rpcdash exits 2 for it, as for a flag it does not know.
type UsageError struct{ error }

func (e UsageError) Unwrap() error { return e.error }

// Usage marks err as a usage error.
func Usage(err error) error { return UsageError{err} }

// Usagef is a usage error with the text format and args make.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }
