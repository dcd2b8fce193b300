// Package ui is the operator console: a Bubble Tea program that shows the
// engine's Snapshot and acts through its control API.
//
// It never owns state. On a tick it asks its Backend for a Snapshot (and
// the events since the last one) in a command, never twice at once, and
// renders only what the last answer says; a key press becomes a command
// that calls the Backend and reports its result as a message. Update only
// changes the model and View only draws it, so both are tested directly.
// A Backend is the engine in the same process (Local) or a running
// `rpcdash serve` reached over its admin API (Remote).
package ui
