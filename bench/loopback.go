package bench

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// checkTarget refuses a URL that is not http(s), and one off this machine
// unless allowRemote.
func checkTarget(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bench: bad target URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("bench: target scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("bench: target URL %q has no host", engine.ShownURL(raw))
	}
	if allowRemote || isLoopbackHost(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("bench: target host %q is not a loopback address; bench only loads this machine (--allow-remote to override)", engine.ShownHost(u.Hostname()))
}

// CheckDrillTargets refuses a drill whose instance is off this machine
// (without AllowRemote) or whose URLs are not http(s), before anything is
// sent, in the drill's words and naming the flag that gave the URL: the
// admin API's (--admin), and the RPC port's (--target) when the drill sends
// reads of its own.
func CheckDrillTargets(cfg DrillConfig) error {
	urls := []struct{ flag, url string }{{"--admin", cfg.Admin.URL}}
	if !cfg.NoLoad {
		urls = append(urls, struct{ flag, url string }{"--target", cfg.RPCURL})
	}
	for _, f := range urls {
		u, err := url.Parse(f.url)
		switch {
		case err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https":
			return fmt.Errorf("drill: %s %q is not an http(s) URL with a host", f.flag, engine.ShownURL(f.url))
		case !cfg.Admin.AllowRemote && !isLoopbackHost(u.Hostname()):
			return fmt.Errorf("drill: %s %s: host %q is not a loopback address; the drill injects faults only into an instance on this machine (--allow-remote to override)",
				f.flag, engine.ShownURL(f.url), engine.ShownHost(u.Hostname()))
		}
	}
	return nil
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// reachable refuses a run against a --target or --control-target that
// takes no connection (checked before the run is announced).
func (cfg CompareConfig) reachable(ctx context.Context) error {
	for _, f := range []struct{ flag, url string }{{"--target", cfg.Target.URL}, {"--control-target", cfg.Target.ControlURL}} {
		if f.url == "" {
			continue
		}
		if err := dialable(ctx, f.flag, f.url); err != nil {
			return err
		}
	}
	return nil
}

// dialable says whether anything takes a TCP connection at raw's host and
// port (the scheme's when it has none): a target nobody listens on is
// refused before the run, not measured as calls that failed in 1 ms.
func dialable(ctx context.Context, flag, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", flag, err)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return fmt.Errorf("bench: %s %s: nothing answers there: %w", flag, engine.ShownURL(raw), err)
	}
	return conn.Close()
}
