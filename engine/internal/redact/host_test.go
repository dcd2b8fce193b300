package redact

import "testing"

// A provider's subdomain may be the endpoint's only credential (QuickNode
// with token auth off: https://abc123secret.quiknode.pro/); a label's
// shape says no more than a path segment's whether it is one. Every label
// below the registrable domain, under the ICANN suffix, is hidden; an IP
// address, a one-label name and a registrable domain are shown whole.
func TestHost_HidesEveryLabelBelowTheRegistrableDomain(t *testing.T) {
	for in, want := range map[string]string{
		"abc123secret.quiknode.pro":     "REDACTED.quiknode.pro",
		"abc123secret.quiknode.pro:443": "REDACTED.quiknode.pro:443",
		"eth-mainnet.g.alchemy.com":     "REDACTED.alchemy.com",
		"Mainnet.Infura.IO":             "REDACTED.Infura.IO",
		"nd-123-456.p2pify.com":         "REDACTED.p2pify.com",
		"abc123secret.ngrok.io":         "REDACTED.ngrok.io", // a private suffix is not the domain
		"mynode.github.io":              "REDACTED.github.io",
		"key.node.co.uk:8545":           "REDACTED.node.co.uk:8545",
		"key.node.internal":             "REDACTED.node.internal",
		"key.node.example.":             "REDACTED.node.example",
		"infura.io":                     "infura.io",
		"localhost:8545":                "localhost:8545",
		"127.0.0.1:8545":                "127.0.0.1:8545",
		"[::1]:8545":                    "[::1]:8545",
		"10.0.0.7":                      "10.0.0.7",
		"co.uk":                         "REDACTED.uk",
		"a..b":                          "REDACTED..b",
		"localhost.":                    "localhost.", // one label and the root's dot
		"a.:8545":                       "a.:8545",
		".":                             ".",
		"..":                            "..",
		".\xb5":                         ".\xb5", // a byte ToLower widens to three
		"KEY.Node.\xb5":                 "REDACTED.Node.\xb5",
	} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %q, want %q", in, got, want)
		}
	}
}
