//go:build race

package gethtest

const raceEnabled = true
