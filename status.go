package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/cli"
)

// statusTimeout bounds `rpcdash status`'s wait for the admin API.
const statusTimeout = 5 * time.Second

// cmdStatus is `rpcdash status`: a running engine's status, read from its
// admin API, as a table, as CSV (the endpoint table's columns) or as the
// API's JSON (--format json, or --json).
func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", stderr)
	admin := fs.String("admin", "127.0.0.1:8546", "admin `URL` of a running rpcdash (http://HOST:PORT, or HOST:PORT)")
	cli.TokenFlag(fs, "token", "bearer token (server.admin_token)")
	format := fs.String("format", "table", "`table`, csv (the endpoint table, for recording measurements over time) or json (the raw status JSON)")
	asJSON := fs.Bool("json", false, "print the raw JSON (--format json)")
	requests := fs.Bool("requests", false, "also print the 5 slowest requests the trace ring holds (GET /v1/requests)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("status: unexpected argument %q", fs.Arg(0))
	}
	token := cli.TokenOf(fs, "token")
	given := cli.Given(fs)
	switch {
	case *format != "table" && *format != "csv" && *format != "json":
		return cli.Usagef("status: --format %q is not one of table, csv, json", *format)
	case *asJSON && *format != "json" && given["format"]:
		return cli.Usagef("status: --json and --format %s disagree", *format)
	case *requests && *asJSON:
		return cli.Usagef("status: --requests applies to --format table; --json prints the raw status JSON")
	case *requests && *format != "table":
		return cli.Usagef("status: --requests applies to --format table, not --format %s", *format)
	case *asJSON:
		*format = "json"
	}
	base, err := engine.BaseURL("status: --admin", *admin)
	if err != nil {
		return cli.Usage(err)
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	var body []byte
	c := engine.AdminClient{Base: base, Token: token}
	if err := c.Do(ctx, http.MethodGet, "/v1/status", nil, &body); err != nil {
		var ae *engine.AdminError
		if errors.As(err, &ae) && ae.NotRpcdash() {
			// Another server's error page or a JSON-RPC node's error:
			// its text said nothing of where it came from.
			return fmt.Errorf("no rpcdash admin API at %s: %s", engine.ShownURL(base), ae.NotRpcdashText())
		}
		if errors.As(err, &ae) && ae.Code != 0 {
			if herr := healthAnswerError(base, ae); herr != nil {
				return herr
			}
			return fmt.Errorf("admin API: %v", err)
		}
		if errors.Is(err, engine.ErrAnswerTooLarge) {
			// Something answers there, more than a status holds.
			return fmt.Errorf("admin API at %s: %v", engine.ShownURL(base), err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			// Something took the connection and said nothing: a stalled
			// or overloaded instance as likely as no rpcdash at all.
			return fmt.Errorf("admin API at %s did not answer within %s (a stalled or overloaded rpcdash, or not an rpcdash)", engine.ShownURL(base), statusTimeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, path included
		}
		return fmt.Errorf("no rpcdash admin API at %s: %v", engine.ShownURL(base), err)
	}
	s, err := statusFrom(base, body)
	if err != nil {
		return err
	}
	if *format == "json" {
		_, err := stdout.Write(body)
		return err
	}
	stdout = printableWriter{stdout}
	if *format == "csv" {
		return printEndpointCSV(stdout, s)
	}
	printStatus(stdout, s, terminalWidth())
	printDrill(ctx, c, stdout)
	if *requests {
		return printSlowest(ctx, c, stdout, 5)
	}
	return nil
}

// printDrill prints the drill running against the instance, if any (GET
// /v1/drill), last with the states in force: its fault is in the table.
// An instance older than the drill lease, or one that does not answer it,
// has the rest of its status printed all the same.
func printDrill(ctx context.Context, c engine.AdminClient, w io.Writer) {
	var d engine.RunningDrill
	if err := c.Do(ctx, http.MethodGet, "/v1/drill", nil, &d); err != nil || !d.Running {
		return
	}
	fmt.Fprintf(w, "drill running: %s, since %s; its lease ends at %s unless it renews it\n",
		d.Holder, d.Since.Format(time.TimeOnly), d.Expires.Format(time.TimeOnly))
}

// printSlowest prints the n slowest requests of the trace ring, each with
// its attempts.
func printSlowest(ctx context.Context, c engine.AdminClient, w io.Writer, n int) error {
	var rs engine.RequestTraces
	if err := c.Do(ctx, http.MethodGet, "/v1/requests?limit=1", nil, &rs); err != nil {
		return fmt.Errorf("admin API: %v", err)
	}
	if !rs.Enabled {
		fmt.Fprintln(w, "request tracing is off (server.trace_requests = 0)")
		return nil
	}
	if err := c.Do(ctx, http.MethodGet, fmt.Sprintf("/v1/requests?limit=%d", rs.Capacity), nil, &rs); err != nil {
		return fmt.Errorf("admin API: %v", err)
	}
	sort.SliceStable(rs.Requests, func(i, j int) bool { return rs.Requests[i].LatencyMS > rs.Requests[j].LatencyMS })
	fmt.Fprintf(w, "slowest of the last %d requests:\n", len(rs.Requests))
	fmt.Fprintf(w, "%-10s %-28s %10s %-10s %s\n", "ID", "METHOD", "LATENCYms", "OUTCOME", "ATTEMPTS")
	for _, r := range rs.Requests[:min(n, len(rs.Requests))] {
		var parts []string
		for _, a := range r.Attempts {
			p := fmt.Sprintf("%s %s@%.1f %s", a.Endpoint, a.Role, a.StartMS, a.Outcome)
			if a.Won {
				p += " (won)"
			}
			parts = append(parts, p)
		}
		fmt.Fprintf(w, "%-10s %-28s %10.1f %-10s %s\n", r.ID, r.Method, r.LatencyMS, r.Outcome, strings.Join(parts, ", "))
	}
	return nil
}

func printStatus(w io.Writer, s engine.Snapshot, width int) {
	delay := engine.FormatDelay(s.Hedge.Delay)
	shadows := ""
	if n := s.Shadows(); n > 0 {
		shadows = fmt.Sprintf(" (+%d shadow)", n)
	}
	hedging := onOff(s.Hedge.Enabled)
	if s.Hedge.Enabled && s.Hedge.Paused {
		hedging = "paused"
	}
	fmt.Fprintf(w, "%d/%d endpoints routable%s, %s in flight, hedging %s (delay %s)\n",
		s.Routable, s.Serving(), shadows, engine.Count(s.InFlight, "request"), hedging, delay)
	printEndpointTable(w, s, width)
	for _, ep := range s.Endpoints {
		if sh := ep.Shadow; sh != nil {
			fmt.Fprintf(w, "shadow %s: mirrored %d, compared %d: match %d, mismatch %d, tip %d, errors %d, dropped %d; match rate %.1f%%; p50/p95 %.1f/%.1f ms (answering %.1f/%.1f ms)",
				ep.Name, sh.Mirrored, sh.Compared, sh.Match, sh.Mismatch, sh.Tip, sh.Errors, sh.Dropped, 100*sh.MatchRate,
				msOf(sh.P50), msOf(sh.P95), msOf(sh.PrimaryP50), msOf(sh.PrimaryP95))
			if lm := sh.LastMismatch; lm != nil {
				fmt.Fprintf(w, "; last mismatch %s at %s", lm.Method, lm.At.Format(time.RFC3339))
			}
			if ep.Role != engine.RoleShadow { // the comparison is kept for a promotion to rest on
				fmt.Fprintf(w, "; no longer a shadow: %s now", engine.RoleLabel(ep.Role, ep.Share))
			}
			fmt.Fprintln(w)
		}
	}
	methods := make([]string, 0, len(s.Methods))
	for m := range s.Methods {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		a := s.Methods[m]
		fmt.Fprintf(w, "  %-28s requests %-7d weight %-5g amplification %.2f hedges %d (won %d) %s%s\n",
			m, a.Requests, a.Weight, a.Amplification, a.HedgesFired, a.HedgesWon, hedgeWords(a, s.Hedge.Enabled), refusedWords(a.HedgesRefused))
	}
	for _, warn := range s.Warnings {
		fmt.Fprintln(w, "warning:", warn.Text)
	}
	for _, line := range inForce(s) {
		fmt.Fprintln(w, line)
	}
}

// hedgeWords says how a method is hedged: its delay and the delay's source,
// or why it is not hedged at all.
func hedgeWords(a engine.MethodStatus, poolEnabled bool) string {
	switch {
	case a.Hedge == nil && a.Class == engine.ClassRead:
		return "never hedged (a read listed as not hedgeable)"
	case a.Hedge == nil:
		return fmt.Sprintf("never hedged (%s)", a.Class)
	case !a.Hedge.Enabled && poolEnabled:
		return "hedging off for this method"
	case !a.Hedge.Enabled:
		return "hedging off"
	}
	return "delay " + a.Hedge.Delay.String() + " " + a.Hedge.DelaySource
}

// inForce are the pool-wide states the console shows as banners, a line
// each, last so that the summary line and the table keep their places:
// a script or an operator reading the table alone saw "hedging off" while
// the queue guard had paused it, and nothing of panic routing.
func inForce(s engine.Snapshot) []string {
	var out []string
	if s.Panic {
		out = append(out, "panic routing: "+s.PanicReason)
	}
	if sd := s.Slowdown; sd != nil {
		who := "the pool"
		if sd.Kind == "self" {
			who = "rpcdash itself"
		}
		out = append(out, fmt.Sprintf("slowdown of %s since %s, not charged to breakers (%d deadlines excused): %s",
			who, sd.Since.Format(time.TimeOnly), sd.Excused, sd.Reason))
	}
	if s.StandbyActive {
		out = append(out, "standby active: "+s.StandbyReason)
	}
	if s.Hedge.Enabled && s.Hedge.Paused {
		out = append(out, "hedging paused: "+s.Hedge.PauseReason)
	}
	return out
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// refusedWords is "; due, not sent: budget 4, queue 8" for a method's
// refused hedges by reason, "" when none was.
func refusedWords(refused map[string]int64) string {
	if len(refused) == 0 {
		return ""
	}
	parts := make([]string, 0, len(refused))
	for _, why := range slices.Sorted(maps.Keys(refused)) {
		parts = append(parts, fmt.Sprintf("%s %d", why, refused[why]))
	}
	return "; due, not sent: " + strings.Join(parts, ", ")
}
