package engine

// Words of events and messages that agree with their number. Exported for
// the console, the probes and the bench, which word their messages alike.

import (
	"strconv"
	"strings"
)

// inFlightFinish says that n requests in flight finish, in words.
func inFlightFinish(n int64) string {
	if n == 1 {
		return "1 request in flight finishes"
	}
	return strconv.FormatInt(n, 10) + " requests in flight finish"
}

// Plural is one when n is 1 and many otherwise: "standby"/"standbys",
// "takes"/"take".
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n and the noun, "s" added unless n is 1: "1 line", "3 lines",
// "2 successes".
func Count[N ~int | ~int64](n N, noun string) string {
	num := strconv.FormatInt(int64(n), 10)
	if n == 1 {
		return num + " " + noun
	}
	if strings.HasSuffix(noun, "s") {
		return num + " " + noun + "es"
	}
	return num + " " + noun + "s"
}

// ofEndpoints is "k of n endpoints", "0 of 1 endpoint".
func ofEndpoints(k, n int) string {
	return strconv.Itoa(k) + " of " + strconv.Itoa(n) + " " + Plural(n, "endpoint", "endpoints")
}
