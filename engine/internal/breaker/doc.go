// Package breaker is a policy-free circuit breaker: the caller asks before
// each attempt and reports how it ended, and state changes go to a hook.
// What counts as a failure, and what a transition means for routing, is
// the engine's call; the breaker only counts and keeps time.
package breaker
