package engine

// Words of events and messages that agree with their number.

import "strconv"

// inFlightFinish says that n requests in flight finish, in words.
func inFlightFinish(n int64) string {
	if n == 1 {
		return "1 request in flight finishes"
	}
	return strconv.FormatInt(n, 10) + " requests in flight finish"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ofEndpoints is "k of n endpoints", "0 of 1 endpoint".
func ofEndpoints(k, n int) string {
	return strconv.Itoa(k) + " of " + strconv.Itoa(n) + " " + plural(n, "endpoint", "endpoints")
}
