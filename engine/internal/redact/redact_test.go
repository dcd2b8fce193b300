package redact

import (
	"net/url"
	"strings"
	"testing"
)

func TestRedaction_RedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://eth-mainnet.g.alchemy.com/v2/AbCdEf123456":             "https://REDACTED.alchemy.com/REDACTED",
		"https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161": "https://REDACTED.infura.io/REDACTED",
		"https://u:p@rpc.example.com/rpc?api_key=xyz":                   "https://REDACTED@REDACTED.example.com/REDACTED?REDACTED",
		"http://127.0.0.1:8545":                                         "http://127.0.0.1:8545",
		"http://127.0.0.1:8545/":                                        "http://127.0.0.1:8545/",
		"https://rpc.ankr.com/eth":                                      "https://REDACTED.ankr.com/REDACTED",
		"https://node.example/MyShortKey":                               "https://node.example/REDACTED",
		"https://node.example/k":                                        "https://node.example/REDACTED",
		"https://node.example/?k":                                       "https://node.example/?REDACTED",
		"https://node.example/a%2Fb":                                    "https://node.example/REDACTED",
		"https://node.example:8443/x#frag":                              "https://node.example:8443/REDACTED",
		"not a url":                                                     "<unparseable url>",
	} {
		if got := URL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"https://rpc.ankr.com/eth":                "https://rpc.ankr.com/eth",
		"https://u:p@rpc.example.com/rpc?chain=1": "https://REDACTED@rpc.example.com/rpc?chain=1",
		"http://127.0.0.1:8545":                   "http://127.0.0.1:8545",
	} {
		if got := DisplayURL(in, true); got != want {
			t.Errorf("DisplayURL(%q, public) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRedactURL: whatever the URL, its path and query never show, nor
// its host but for its registrable domain.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"https://h/MyShortKey", "http://u:p@h:1/a/b?k=v#f", "https://h/%2F?x", "http://h?q", "http://[::1]:8545/k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out := URL(raw)
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" {
			if out != "<unparseable url>" {
				t.Fatalf("%q shown as %q", raw, out)
			}
			return
		}
		rest := strings.TrimPrefix(out, u.Scheme+"://")
		rest = strings.TrimPrefix(rest, "REDACTED@")
		rest = strings.TrimPrefix(rest, Host(u.Host))
		switch rest {
		case "", "/", "/REDACTED", "?REDACTED", "/?REDACTED", "/REDACTED?REDACTED":
		default:
			t.Fatalf("%q shown as %q: %q follows the host", raw, out, rest)
		}
	})
}
