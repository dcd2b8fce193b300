package redact

import "testing"

// An upstream may quote a URL's user name or password on their own, not
// only the user info whole ("auth failed for PASSWD789 (user userx)" was
// relayed with both in it): each is a secret as a path segment or a query
// value is, as the URL spells it and decoded, from minScrubValue bytes.
func TestScrub_UserNameAndPasswordOnTheirOwn(t *testing.T) {
	s := NewScrubber([]string{
		"http://userx:PASSWD789@127.0.0.1:34119/key/SECRETKEY999",
		"https://us%40er:p%40ss%2Fw0rd@node.example/?apikey=k%2Bey1&SOLOKEY",
		"http://LONGUSER@other.example/",
	})
	for in, want := range map[string]string{
		"auth failed for PASSWD789 (user userx) at /key/SECRETKEY999": "auth failed for REDACTED (user REDACTED) at /REDACTED",
		"Get http://userx:PASSWD789@127.0.0.1:34119/key/SECRETKEY999": "Get http://REDACTED@127.0.0.1:34119/REDACTED",
		"credentials userx:PASSWD789 refused":                         "credentials REDACTED refused",
		"bad password p@ss/w0rd or p%40ss%2Fw0rd for us@er, us%40er":  "bad password REDACTED or REDACTED for REDACTED, REDACTED",
		"key k+ey1 (k%2Bey1), SOLOKEY":                                "key REDACTED (REDACTED), REDACTED",
		"who is LONGUSER?":                                            "who is REDACTED?",
	} {
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// A fragment shorter than its threshold is not scrubbed on its own (a user
// name "x" replaced in every word holding an x would leave no message to
// read); the user info whole always is, whatever its length, and before
// its host, as Go spells it with the password hidden (the HTTP client's
// errors: x:***@host).
func TestScrub_ShortFragmentsOnlyWhole(t *testing.T) {
	s := NewScrubber([]string{"http://x:abc@127.0.0.1:1/", "http://a@127.0.0.1:2/rpc?k=v"})
	for in, want := range map[string]string{
		"exit x with abc at a node":        "exit x with abc at a node",
		"sent x:abc":                       "sent REDACTED",
		`Post "http://x:***@127.0.0.1:1/"`: `Post "http://REDACTED@127.0.0.1:1/"`,
		"http://x:xxxxx@127.0.0.1:1/":      "http://REDACTED@127.0.0.1:1/",
		"path /rpc?k=v, query k=v":         "path /REDACTED?REDACTED, query REDACTED",
		"dial http://a@127.0.0.1:2/rpc":    "dial http://REDACTED@127.0.0.1:2/REDACTED",
	} {
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// The longer of two secrets goes first, whichever URL each is of: a
// shorter one inside it would otherwise leave the rest of it in view.
func TestScrub_LongestSecretFirst(t *testing.T) {
	s := NewScrubber([]string{"http://127.0.0.1:1/v3/SECRETKEY", "http://PASSWORD99:PASS@127.0.0.1:2/v3/SECRETKEY2024"})
	for in, want := range map[string]string{
		"user PASSWORD99, password PASS": "user REDACTED, password REDACTED",
		"keys SECRETKEY2024, SECRETKEY":  "keys REDACTED, REDACTED",
	} {
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// Go's errors name an endpoint's host alone ("lookup HOST: no such host",
// "dial tcp HOST:443", "certificate is valid for X, not HOST"): its labels
// below the registrable domain are scrubbed there as URL shows it, and a
// long one on its own, as a path segment is.
func TestScrub_HiddenHostLabels(t *testing.T) {
	s := NewScrubber([]string{"https://abc123secret.quiknode.pro/TOKEN777SECRET/", "https://u:pw12@Eth-Node.g.Example.com/k"})
	for in, want := range map[string]string{
		"lookup abc123secret.quiknode.pro on 10.0.0.53:53: no such host":           "lookup REDACTED.quiknode.pro on 10.0.0.53:53: no such host",
		"dial tcp abc123secret.quiknode.pro:443: i/o timeout":                      "dial tcp REDACTED.quiknode.pro:443: i/o timeout",
		"endpoint abc123secret is disabled":                                        "endpoint REDACTED is disabled",
		`Post "https://abc123secret.quiknode.pro/TOKEN777SECRET/": EOF`:            `Post "https://REDACTED.quiknode.pro/REDACTED": EOF`,
		"x509: certificate is valid for *.example.com, not eth-node.g.example.com": "x509: certificate is valid for *.example.com, not REDACTED.example.com",
		`Get "https://u:***@Eth-Node.g.Example.com/k"`:                             `Get "https://REDACTED@REDACTED.Example.com/REDACTED"`,
		"the quiknode.pro network":                                                 "the quiknode.pro network",
	} {
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// A secret part of 8 bytes or more is scrubbed in any case: an upstream
// echoing a path key upper-cased showed it whole. A shorter one only as
// spelt, since in any case it is in ordinary words.
func TestScrub_LongPartsInAnyCase(t *testing.T) {
	s := NewScrubber([]string{"http://user:PASS@127.0.0.1:1/v3/PATHKEYa1b2c3d4e5f6?apikey=QUERYkey77"})
	for in, want := range map[string]string{
		"bad key PATHKEYA1B2C3D4E5F6":           "bad key REDACTED",
		"bad key pathkeya1b2c3d4e5f6, password": "bad key REDACTED, password",
		"apikey QUERYKEY77 or querykey77":       "apikey REDACTED or REDACTED",
		"the PASS, pass and Password":           "the REDACTED, pass and Password",
	} {
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}
