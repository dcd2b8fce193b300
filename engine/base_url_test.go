package engine_test

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// A running rpcdash is named by a full URL or by host:port alike; a
// trailing slash does not double the API's paths.
func TestBaseURL_FullURLOrHostPort(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:18822":  "http://127.0.0.1:18822",
		"http://127.0.0.1:18822/": "http://127.0.0.1:18822",
		"127.0.0.1:18822":         "http://127.0.0.1:18822",
		"localhost:8546":          "http://localhost:8546",
		"[::1]:8546":              "http://[::1]:8546",
		"https://rpc.example/v1/": "https://rpc.example/v1",
		"http://127.0.0.1":        "http://127.0.0.1",
		"https://[::1]:8546":      "https://[::1]:8546",
	} {
		got, err := engine.BaseURL("--admin", raw)
		if err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	// A bare host is not a host:port (it was taken for port 80), nor is an
	// empty or impossible port.
	for _, raw := range []string{"", "ftp://127.0.0.1:1", "http://", "http://user:pw@127.0.0.1:1",
		"127.0.0.1", "localhost", "[::1]", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "http://127.0.0.1:", "user:pw@127.0.0.1",
		"mainnet.infura.io/v3/pwKEY", "127.0.0.1/pwKEY?pwq=1", "[::1/pwKEY"} {
		_, err := engine.BaseURL("--admin", raw)
		if err == nil || !strings.HasPrefix(err.Error(), "--admin: ") {
			t.Errorf("BaseURL(%q): %v, want an error naming --admin", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("BaseURL(%q) shows the password or key: %v", raw, err)
		}
	}
	// A URL with user info is told so, not told it is no URL.
	for _, raw := range []string{"http://user:pw@127.0.0.1:8546", "user:pw@127.0.0.1:8546"} {
		_, err := engine.BaseURL("--admin", raw)
		if err == nil || !strings.Contains(err.Error(), "user info") || strings.Contains(err.Error(), "is not a URL") || strings.Contains(err.Error(), "pw") {
			t.Errorf("BaseURL(%q): %v, want an error saying user info is not taken", raw, err)
		}
	}
	// A JSON-RPC target's is told what to do instead, not pointed at the
	// admin token's flags.
	_, err := engine.TargetURL("bench: --target", "http://u:pw12@127.0.0.1:8545/pwpath?apikey=pwq")
	if err == nil || !strings.Contains(err.Error(), "user info") || strings.Contains(err.Error(), "--admin-token") ||
		!strings.Contains(err.Error(), "[[endpoints]] url") || strings.Contains(err.Error(), "pw") {
		t.Errorf("TargetURL with user info: %v, want it refused with what to do instead", err)
	}
	// A bare value is shown as a URL is: its host, its path REDACTED (it
	// was shown whole, having no "://").
	if _, err := engine.BaseURL("--admin", "mainnet.infura.io/v3/pwKEY"); err == nil || !strings.Contains(err.Error(), `"REDACTED.infura.io/REDACTED"`) {
		t.Errorf("bare host with a path: %v", err)
	}
}
