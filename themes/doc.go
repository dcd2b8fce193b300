// Package themes holds the console's colour themes as data: TOML files of
// semantic roles (ok, warn, error, breaker states, …), embedded in the
// binary and validated when loaded. The console turns a Theme into styles
// in one function (ui/styles.go); nothing else here knows about terminals.
//
// Promises:
//   - A theme that fails validation is never half-applied: LoadOrDefault falls
//     back to the embedded default and returns why.
package themes
