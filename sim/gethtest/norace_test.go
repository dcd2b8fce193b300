//go:build !race

package gethtest

const raceEnabled = false
