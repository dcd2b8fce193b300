package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// An endpoint reached through a proxy says so in its detail (its latency
// and failures are the proxy's path's); a direct one says nothing.
func TestView_DetailSaysAnEndpointIsReachedThroughAProxy(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[0].Proxy = "http://REDACTED@proxy.corp:3128"
	s.Endpoints[1].Proxy = engine.ProxyFromEnv
	m := fixedModel(s, themes.Default(), 120, 36)
	for i, want := range []string{"via proxy http://REDACTED@proxy.corp:3128", "via the environment's proxy", ""} {
		m.epCursor = i
		d := strings.Join(strings.Fields(strings.Join(m.detailLines(116), " ")), " ")
		if want == "" && strings.Contains(d, "via ") || want != "" && !strings.Contains(d, want) {
			t.Errorf("endpoint %d: detail %q, want %q", i, d, want)
		}
	}
}
