package probes

import (
	"strings"
	"testing"
)

func TestParseEndpointURL(t *testing.T) {
	cases := map[string]endpointRef{
		"https://rpc.test/v3/KEY":         {host: "rpc.test", port: "443", tls: true},
		"wss://rpc.test:8443/ws":          {host: "rpc.test", port: "8443", tls: true},
		"http://u:p@127.0.0.1:8545":       {host: "127.0.0.1", port: "8545"},
		"WS://[2001:db8::1]/":             {host: "2001:db8::1", port: "80"},
		"https://[2001:db8::1]:9000/?k=v": {host: "2001:db8::1", port: "9000", tls: true},
	}
	for in, want := range cases {
		if got, err := parseEndpointURL(in); err != nil || got != want {
			t.Errorf("%s → %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://rpc.test/KEY", "https:///KEY", "rpc.test:8545", "https://exa mple.test/KEY"} {
		_, err := parseEndpointURL(bad)
		if err == nil {
			t.Errorf("%s accepted", bad)
		} else if strings.Contains(err.Error(), "KEY") {
			t.Errorf("%s: error leaks the URL: %v", bad, err)
		}
	}
}

func TestRedactorScrubsEverySecretPart(t *testing.T) {
	raw := "https://user:PASS@rpc.test:443/v3/PATHKEY?apikey=QUERYKEY#FRAG"
	r := newRedactor(raw)
	in := "Get \"" + raw + "\": dial rpc.test:443 failed; path /v3/PATHKEY query apikey=QUERYKEY user user:PASS frag FRAG"
	out := r.clean(in)
	for _, secret := range []string{"PASS", "PATHKEY", "QUERYKEY", "FRAG"} {
		if strings.Contains(out, secret) {
			t.Fatalf("%q left in %q", secret, out)
		}
	}
	if !strings.Contains(out, "rpc.test") {
		t.Fatalf("host scrubbed too: %q", out)
	}
}
