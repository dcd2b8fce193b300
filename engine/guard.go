package engine

import (
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
	"github.com/rs/cors"
)

// Both ports are reachable by any web page the operator opens: a page can
// make the browser POST to 127.0.0.1, or rebind its own name to 127.0.0.1
// and then read the answers. browserGuard refuses what only a browser
// sends, as geth does with --http.vhosts and --http.corsdomain:
//   - a Host outside server.vhosts (DNS rebinding),
//   - an Origin outside server.cors_origins (a cross-site request),
//   - on the admin API, a page's POST (one with an Origin, a listed one)
//     without Content-Type: application/json, the one kind of body a page
//     cannot POST without a CORS preflight. A browser sends Origin with
//     every POST, so one without is a script's: `curl -X POST …/drain`,
//     with no header, or `curl -d`, with a form's, were refused with a 415
//     that guarded nothing. A PUT or DELETE always takes a preflight, so
//     it needs the header from no one.
//
// Listed origins get CORS answers (preflight included) from rs/cors.
type browserGuard struct {
	hosts   []string // lower-case, no brackets; "*" allows any
	anyHost bool
	cors    *cors.Cors // nil when server.cors_origins is empty
	refuse  func(w http.ResponseWriter, status int, msg string)
	// adminRoutes, on the admin API (nil on the RPC port), says whether it
	// takes r's method on r's path: a call it does not take is its 404 or
	// 405, not a 415.
	adminRoutes func(r *http.Request) bool
	// readTimeout bounds what is read of a refused request's body.
	readTimeout time.Duration
}

func newBrowserGuard(s ServerConfig, adminRoutes func(*http.Request) bool, refuse func(http.ResponseWriter, int, string)) *browserGuard {
	g := &browserGuard{hosts: s.AllowedHosts(), refuse: refuse, adminRoutes: adminRoutes, readTimeout: s.ReadTimeout}
	g.anyHost = slices.Contains(g.hosts, "*")
	if len(s.CORSOrigins) > 0 {
		headers := []string{"Content-Type", "Authorization"}
		if adminRoutes == nil {
			// A listed origin's page may send the headers its SDK adds
			// (thirdweb's x-client-id, viem's fetchOptions), as geth allows.
			headers = []string{"*"}
		}
		g.cors = cors.New(cors.Options{
			AllowedOrigins: s.CORSOrigins,
			AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete},
			AllowedHeaders: headers,
			ExposedHeaders: []string{HeaderEndpoint, HeaderAttempts, HeaderHedged, HeaderRequestID},
			MaxAge:         600,
			// Listing a public page's origin is asking for it to reach
			// this loopback port (Chrome's Private Network Access).
			AllowPrivateNetwork: true,
		})
	}
	return g
}

func (g *browserGuard) wrap(next http.Handler) http.Handler {
	inner := next
	if g.adminRoutes != nil {
		inner = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, page := r.Header["Origin"]
			if page && r.Method == http.MethodPost && g.adminRoutes(r) && !isJSONContentType(r.Header.Get("Content-Type")) {
				closeUnreadBody(w, r, g.readTimeout)
				g.refuse(w, http.StatusUnsupportedMediaType, r.Method+" "+r.URL.Path+
					" from a page needs Content-Type: application/json (a guard against cross-site requests)")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	if g.cors != nil {
		inner = g.cors.Handler(inner)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !mutating(r.Method) {
			// Neither port reads the body of a GET, HEAD or OPTIONS (a
			// CORS preflight is answered by rs/cors).
			closeUnreadBody(w, r, g.readTimeout)
		}
		if host := requestHost(r.Host); host != "" && !g.anyHost && !slices.Contains(g.hosts, host) && net.ParseIP(host) == nil {
			closeUnreadBody(w, r, g.readTimeout)
			g.refuse(w, http.StatusForbidden, "Host "+quoteShort(r.Host)+
				" is not allowed: add it to server.vhosts (a guard against DNS rebinding)")
			return
		}
		if origin, sent := r.Header["Origin"]; sent && (g.cors == nil || !g.cors.OriginAllowed(r)) {
			closeUnreadBody(w, r, g.readTimeout)
			g.refuse(w, http.StatusForbidden, "Origin "+quoteShort(strings.Join(origin, ","))+
				" is not allowed: add it to server.cors_origins")
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// requestHost is the Host header's name: lower-case, without port,
// brackets or a trailing dot. An empty Host (HTTP/1.0) is let through, as
// geth does: browsers always send one. So is an IP address, as geth does:
// DNS rebinding needs a name, and a client reaching rpcdash through a port
// forward or a container's gateway names the address it dialled.
func requestHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

func mutating(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

func isJSONContentType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// quoteShort quotes a client-supplied value for an error message.
func quoteShort(s string) string {
	return `"` + redact.Sanitize(s, 128) + `"`
}
