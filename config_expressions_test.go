package main

import "testing"

// A key or table defined twice names its line, column and whole key, as
// any other TOML error does: it said only "While parsing config: toml:
// key listen is already defined", which a long file's reader must hunt
// for (and which of the [[endpoints]] had two url?).
func TestLoadConfig_ARedefinitionNamesItsLineAndKey(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"[server]\nlisten = \"127.0.0.1:8545\"\nlisten = \"127.0.0.1:9545\"\n",
			"line 3, column 1: key listen is already defined (at key server.listen)"},
		{"[server]\nlisten = \"127.0.0.1:8545\"\n\n[hedge]\ndelay = \"auto\"\n\n[server]\nadmin = \"127.0.0.1:8546\"\n",
			"line 7, column 2: table server already exists (at key server)"},
		{"[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:9001\"\n[[endpoints]]\nname = \"b\"\nurl = \"http://127.0.0.1:9002\"\nurl = [\n\"http://127.0.0.1:9003\"\n]\n",
			"line 7, column 1: key url is already defined (at key endpoints[1].url)"},
	} {
		path := writeConfig(t, tc.body)
		_, err := loadConfig(path)
		if err == nil || err.Error() != "config "+path+": "+tc.want {
			t.Errorf("%q:\n got %v\nwant config %s: %s", tc.body, err, path, tc.want)
		}
	}
}

// A number TOML cannot hold (an integer past 2^63, a float past 1.8e308)
// names its key as well as its line: it said only "line 4, column 18:
// couldn't parse decimal number: … value out of range", where every other
// bad value names its key. And it says what a number may be, in its own
// words, not strconv's.
func TestLoadConfig_ANumberOutOfRangeNamesItsKey(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"[server]\nlisten = \"127.0.0.1:8545\"\nmax_body_bytes = 99999999999999999999\n",
			`line 3, column 18: the number is out of range: a whole number is from -9223372036854775808 to 9223372036854775807 (at key server.max_body_bytes)`},
		{"[hedge]\nbudget = 1e309\n",
			`line 2, column 10: the number is out of range: a number is at most ±1.8e+308 (at key hedge.budget)`},
		{"[server]\nvhosts = [\n\"localhost\",\n99999999999999999999]\n",
			`line 4, column 1: the number is out of range: a whole number is from -9223372036854775808 to 9223372036854775807 (at key server.vhosts)`},
	} {
		path := writeConfig(t, tc.body)
		_, err := loadConfig(path)
		if err == nil || err.Error() != "config "+path+": "+tc.want {
			t.Errorf("%q:\n got %v\nwant config %s: %s", tc.body, err, path, tc.want)
		}
	}
}
