package engine

// How an endpoint is reached: directly, or through the proxy its config
// names ([[endpoints]] proxy).

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"golang.org/x/net/http/httpproxy"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// proxyFunc picks the proxy of one request to an endpoint (nil: direct).
type proxyFunc func(*url.URL) (*url.URL, error)

// proxyKey carries a request's proxyFunc to the shared transport.
type proxyKey struct{}

// proxyFor is the proxyFunc of an endpoint's proxy setting, read once: ""
// is direct (nil), ProxyFromEnv the environment as it is at start-up
// (loopback is never proxied), any other value the proxy URL itself.
func proxyFor(setting string) proxyFunc {
	switch setting {
	case "":
		return nil
	case ProxyFromEnv:
		return httpproxy.FromEnvironment().ProxyFunc()
	}
	u, err := url.Parse(setting)
	if err != nil { // refused by validation
		return nil
	}
	return func(*url.URL) (*url.URL, error) { return u, nil }
}

// displayProxy is a proxy setting as it may be shown.
func displayProxy(setting string) string {
	if setting == "" || setting == ProxyFromEnv {
		return setting
	}
	return redact.URL(setting)
}

// requestProxy is the shared transport's Proxy: the endpoint's, carried
// by the request's context; none for the others.
func requestProxy(r *http.Request) (*url.URL, error) {
	if p, ok := r.Context().Value(proxyKey{}).(proxyFunc); ok {
		return p(r.URL)
	}
	return nil, nil
}

// withProxy makes ctx carry ep's proxy, if it has one.
func withProxy(ctx context.Context, ep *endpoint) context.Context {
	if ep.proxy == nil {
		return ctx
	}
	return context.WithValue(ctx, proxyKey{}, ep.proxy)
}

// unusedEnvProxy names the proxy variable set in the environment when some
// endpoint does not use it (""): behind a proxy that is the only way out,
// such an endpoint cannot be reached, where a client that reads the
// variable (curl) reaches it.
func unusedEnvProxy(cfg Config) string {
	for _, c := range cfg.Endpoints {
		if u, err := url.Parse(c.URL); c.Proxy != "" || err == nil && isLoopbackAddr(net.JoinHostPort(u.Hostname(), "0")) {
			continue
		}
		// The variables "env" reads (curl's ALL_PROXY is not one of them).
		for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
			if strings.TrimSpace(os.Getenv(name)) != "" {
				return name
			}
		}
	}
	return ""
}
