package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// cmdStatus is `rpcdash status`: a running engine's status, read from its
// admin API, as a table or (--json) as the API gives it.
func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", stderr)
	admin := fs.String("admin", "127.0.0.1:8546", "admin address of a running rpcdash")
	token := fs.String("token", os.Getenv("RPCDASH_SERVER_ADMIN_TOKEN"), "bearer token (server.admin_token)")
	asJSON := fs.Bool("json", false, "print the raw JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+*admin+"/v1/status", nil)
	if err != nil {
		return err
	}
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("no rpcdash admin API at %s: %v", *admin, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("admin API: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if *asJSON {
		_, err = stdout.Write(body)
		return err
	}
	var s engine.Snapshot
	if err := json.Unmarshal(body, &s); err != nil {
		return err
	}
	printStatus(stdout, s)
	return nil
}

func printStatus(w io.Writer, s engine.Snapshot) {
	delay := "auto"
	if s.Hedge.Delay > 0 {
		delay = s.Hedge.Delay.String()
	}
	fmt.Fprintf(w, "%d/%d endpoints routable, %d requests in flight, hedging %s (delay %s)\n",
		s.Routable, len(s.Endpoints), s.InFlight, onOff(s.Hedge.Enabled && !s.Hedge.Paused), delay)
	fmt.Fprintf(w, "%-12s %-10s %-8s %8s %8s %8s %6s %s\n", "ENDPOINT", "BREAKER", "DRAINED", "P50ms", "P99ms", "ERR%", "LAG", "LAST ERROR")
	for _, ep := range s.Endpoints {
		fmt.Fprintf(w, "%-12s %-10s %-8v %8.1f %8.1f %8.1f %6d %s\n", ep.Name, ep.Breaker.State, ep.Drained,
			msOf(ep.Latency.P50), msOf(ep.Latency.P99), 100*ep.Rates.ErrorRate, ep.Lag, ep.LastError)
	}
	methods := make([]string, 0, len(s.Methods))
	for m := range s.Methods {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		a := s.Methods[m]
		delay := ""
		if a.Hedge != nil {
			delay = a.Hedge.Delay.String() + " " + a.Hedge.DelaySource
		}
		fmt.Fprintf(w, "  %-28s requests %-7d amplification %.2f hedges %d (won %d) delay %s\n",
			m, a.Requests, a.Amplification, a.HedgesFired, a.HedgesWon, delay)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintln(w, "warning:", warn.Text)
	}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
