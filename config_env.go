package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
)

// envPrefix starts every environment variable that overrides a config key:
// RPCDASH_<SECTION>_<KEY>, the key's dots made underscores.
const envPrefix = "RPCDASH_"

// toolEnv are RPCDASH_ variables that are not config keys: the test and CI
// tooling's (.ci/run, e2e). An rpcdash started under them must not refuse
// to run; every other RPCDASH_ variable must name a config key.
var toolEnv = []string{
	"RPCDASH_GETH",     // the geth binary the e2e tests run
	"RPCDASH_TOOLS",    // .ci/run's tools cache
	"RPCDASH_FUZZTIME", // .ci/run's fuzzing budget
}

// envName is the environment variable that overrides key.
func envName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// envOf is the variable that set key, or "" when the environment does not
// set it (viper then read it from the file, or it is a default).
func envOf(key string) string {
	name := envName(key)
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return name
	}
	return ""
}

// unknownEnv names every RPCDASH_ variable of environ that overrides no
// config key (a typo would otherwise be silently ignored), with the
// closest real one when it is a likely typo: problems of no key.
func unknownEnv(environ, keys []string) []engine.ConfigProblem {
	known := make([]string, 0, len(keys))
	for _, k := range keys {
		known = append(known, envName(k))
	}
	var out []engine.ConfigProblem
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		if !strings.HasPrefix(upper, envPrefix) || slices.Contains(known, name) || slices.Contains(toolEnv, upper) {
			continue
		}
		near := closest(upper, known)
		if name != upper {
			// Variable names are case-sensitive: rpcdash_hedge_delay was
			// ignored without a word, leaving the setting it meant undone.
			// One that names no key nor is near one is someone else's.
			switch {
			case slices.Contains(known, upper):
				out = append(out, engine.ConfigProblem{Why: fmt.Sprintf("%s is not read: the variables are named in capitals (%s)", name, upper)})
			case near != "":
				out = append(out, engine.ConfigProblem{Why: fmt.Sprintf("%s is not a config key (did you mean %s?)", name, near)})
			}
			continue
		}
		msg := name + " is not a config key"
		if near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		} else if section := fileOnlySection(upper); section != "" {
			msg += " (" + section + " are set in the config file only)"
		}
		out = append(out, engine.ConfigProblem{Why: msg})
	}
	slices.SortFunc(out, func(a, b engine.ConfigProblem) int { return strings.Compare(a.Why, b.Why) })
	return out
}

// fileOnlySection names the tables the environment cannot set that name,
// an upper-cased variable, reaches into, or is "".
func fileOnlySection(name string) string {
	for _, t := range [...]struct{ prefix, section string }{
		{"ENDPOINTS", "[[endpoints]]"},
		{"HEDGE_METHODS", "[hedge.methods]"},
		{"METHODS_WEIGHTS", "[methods.weights]"},
		{"METHODS_TIMEOUTS", "[methods.timeouts]"},
	} {
		// The table itself or a key in it; not a longer name it begins
		// (RPCDASH_ENDPOINTSX).
		if table := envPrefix + t.prefix; name == table || strings.HasPrefix(name, table+"_") {
			return t.section
		}
	}
	return ""
}

// closest is the candidate nearest to name by edit distance, if it is
// near enough to be a typo (at most 2 edits, 1 for short names).
func closest(name string, candidates []string) string {
	edits := 2
	if len(name)-len(envPrefix) < 6 {
		edits = 1
	}
	return closestKey(name, edits, candidates)
}

// closestKey is the candidate nearest to name, if at most edits away.
func closestKey(name string, edits int, candidates []string) string {
	best, bestD := "", edits+1
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes: the names
// are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
