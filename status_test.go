package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// statusServe starts `rpcdash serve` over sims with extra config, and
// returns its RPC and admin addresses.
func statusServe(t *testing.T, extra string) (rpcAddr, adminAddr string) {
	t.Helper()
	cfg := writeConfig(t, loopbackServer+`
[probes]
interval = "200ms"
asn = "off"
`+extra+`
[[endpoints]]
name = "alpha"
url = "sim://steady?median=5ms&sigma=0.1&seed=1"
provider = "pa"
region = "eu-west"

[[endpoints]]
name = "beta"
url = "sim://steady?median=10ms&sigma=0.1&seed=2"
role = "standby"

[[endpoints]]
name = "gamma"
url = "sim://steady?median=8ms&sigma=0.1&seed=3"
`)
	p := startProc(t, "serve", "--config", cfg)
	m := p.Line(t, addrLine)
	t.Cleanup(func() {
		p.Signal(t, syscall.SIGTERM)
		if code := p.Wait(t, 10*time.Second); code != 0 {
			t.Errorf("serve exit %d", code)
		}
	})
	return m[1], m[2]
}

func runStatus(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"status"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// Each method's weight in the hedge budget shows in `rpcdash status` and
// its JSON: the built-in ones, and the config's where it sets one.
func TestStatus_ShowsEachMethodsWeight(t *testing.T) {
	rpcAddr, adminAddr := statusServe(t, `
[methods.weights]
eth_call = 9
`)
	for _, m := range []string{"eth_blockNumber", "eth_getLogs", "eth_call"} {
		tryCall(rpcAddr, m) // answered or not, the method is accounted
	}
	out, errs, code := runStatus(t, "--admin", adminAddr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for m, w := range map[string]string{"eth_blockNumber": "1", "eth_getLogs": "6", "eth_call": "9"} {
		if !regexp.MustCompile(`(?m)^  ` + m + ` +requests \d+ +weight ` + w + ` `).MatchString(out) {
			t.Errorf("no %s line with weight %s in:\n%s", m, w, out)
		}
	}
	js, _, _ := runStatus(t, "--admin", adminAddr, "--json")
	var doc struct {
		Methods map[string]struct {
			Weight float64 `json:"weight"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Methods["eth_getLogs"].Weight != 6 || doc.Methods["eth_call"].Weight != 9 || doc.Methods["eth_blockNumber"].Weight != 1 {
		t.Fatalf("weights in the JSON: %+v", doc.Methods)
	}
}

func adminPost(t *testing.T, adminAddr, path, body string) {
	t.Helper()
	resp, err := client.Post("http://"+adminAddr+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d %s", path, resp.StatusCode, b)
	}
}

// statusScene is a serve whose three endpoints show every kind of note: alpha
// a primary with a provider and a region, beta a drained standby with
// neither, gamma a primary failing under an injected fault (its last error
// set by the probes).
func statusScene(t *testing.T) (adminAddr string) {
	t.Helper()
	rpcAddr, adminAddr := statusServe(t, "")
	adminPost(t, adminAddr, "/v1/endpoints/beta/drain", "")
	adminPost(t, adminAddr, "/v1/endpoints/gamma/fault", `{"mode":"error"}`)
	for i := 0; i < 20; i++ {
		tryCall(rpcAddr, "eth_blockNumber")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var s struct {
			Endpoints []struct {
				Name      string `json:"name"`
				LastError string `json:"last_error"`
			} `json:"endpoints"`
		}
		json.Unmarshal([]byte(get(t, "http://"+adminAddr+"/v1/status")), &s)
		for _, ep := range s.Endpoints {
			if ep.Name == "gamma" && strings.Contains(ep.LastError, "injected fault: HTTP 500") {
				return adminAddr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gamma shows no injected failure after 10s: %+v", s.Endpoints)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The endpoint table carries the failover seed's results-table columns,
// fits 80 columns with short names (the last error cut), and shows the
// whole last error in 120 when COLUMNS is unset.
func TestStatus_TableHasTheSeedsResultsColumns(t *testing.T) {
	adminAddr := statusScene(t)
	t.Setenv("COLUMNS", "80")
	out, errs, code := runStatus(t, "--admin", adminAddr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	header := regexp.MustCompile(`^ENDPOINT +PROVIDER +REGION +P50ms +P95ms +P99ms +LAG +ERR% +429% +STATE +NOTES$`)
	if len(lines) < 5 || !header.MatchString(lines[1]) {
		t.Fatalf("no endpoint table header in:\n%s", out)
	}
	row := func(name string) []string {
		for _, l := range lines[2:5] {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return f
			}
		}
		t.Fatalf("no %s row in:\n%s", name, out)
		return nil
	}
	num := regexp.MustCompile(`^\d+(\.\d)?$`)
	for _, name := range []string{"alpha", "beta", "gamma"} {
		f := row(name)
		for i, cell := range f[3:9] {
			if name == "gamma" && i == 3 && cell == "-" {
				continue // gamma failed every probe since start: no head, no lag
			}
			if !num.MatchString(cell) {
				t.Errorf("%s: figure %q in %v", name, cell, f)
			}
		}
	}
	if a := row("alpha"); a[1] != "pa" || a[2] != "eu-west" || a[9] != "closed" || a[10] != "primary" || len(a) != 11 {
		t.Errorf("alpha row %v", a)
	}
	if b := row("beta"); b[1] != "-" || b[2] != "-" || b[9] != "closed,drained" || b[10] != "standby" {
		t.Errorf("beta row %v", b)
	}
	g := strings.Join(row("gamma"), " ")
	// With 429% beside ERR% the role alone fills the 80 columns here: the
	// rest of the notes is left out, marked when there is room for it.
	if !strings.Contains(g, " - - ") || !strings.HasSuffix(g, " primary …") && !strings.HasSuffix(g, " primary") {
		t.Errorf("gamma row %q at 80 columns: want its notes cut to fit", g)
	}
	for _, l := range lines[1:5] {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("%d columns with COLUMNS=80: %q", n, l)
		}
	}
	t.Logf("COLUMNS=80:\n%s", strings.Join(lines[:5], "\n"))

	for _, c := range []struct {
		columns string
		width   int
		whole   bool
	}{{"", 120, false}, {"200", 200, true}} {
		t.Setenv("COLUMNS", c.columns)
		out, _, _ = runStatus(t, "--admin", adminAddr)
		var gamma string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "gamma ") {
				gamma = l
			}
			if n := utf8.RuneCountInString(l); strings.Contains(l, "last error") && n > c.width {
				t.Errorf("%d columns with COLUMNS=%q: %q", n, c.columns, l)
			}
		}
		full := strings.HasSuffix(gamma, "primary; fault error; last error: injected fault: HTTP 500") ||
			strings.HasSuffix(gamma, "primary; fault error; last error: probe: injected fault: HTTP 500")
		if !strings.Contains(gamma, "primary; fault error; last error: ") || full != c.whole {
			t.Errorf("COLUMNS=%q: gamma %q; want the last error whole: %v", c.columns, gamma, c.whole)
		}
		t.Logf("COLUMNS=%q: %s", c.columns, gamma)
	}
}

// --format csv gives the same columns, a row per endpoint, nothing cut;
// --format json the raw status JSON; any other format is a usage error.
func TestStatus_FormatCSVAndJSON(t *testing.T) {
	adminAddr := statusScene(t)
	out, errs, code := runStatus(t, "--admin", adminAddr, "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	want := []string{"ENDPOINT", "PROVIDER", "REGION", "P50ms", "P95ms", "P99ms", "LAG", "ERR%", "STATE", "NOTES", "429%", "LOWER_BOUNDS"}
	if len(recs) != 4 || strings.Join(recs[0], "|") != strings.Join(want, "|") {
		t.Fatalf("csv:\n%s", out)
	}
	by := map[string][]string{}
	for _, r := range recs[1:] {
		by[r[0]] = r
		for i, cell := range append(r[3:8:8], r[10]) {
			if r[0] == "gamma" && cell == "" && (i == 3 || r[7] == "100.0") {
				// gamma failed every probe since its fault: no head, no lag;
				// and when its fault came before its start-up probe's answer
				// (a race the scene does not settle), no answer at all, so
				// no latency either (an empty cell, as README says)
				continue
			}
			if _, err := strconv.ParseFloat(cell, 64); err != nil {
				t.Errorf("%s: figure %q", r[0], cell)
			}
		}
	}
	if a := by["alpha"]; a[1] != "pa" || a[2] != "eu-west" || a[8] != "closed" || a[9] != "primary" {
		t.Errorf("alpha %v", a)
	}
	if b := by["beta"]; b[1] != "-" || b[2] != "-" || b[8] != "closed,drained" || b[9] != "standby" {
		t.Errorf("beta %v", b)
	}
	if g := by["gamma"]; !strings.HasPrefix(g[9], "primary; fault error; last error: ") || !strings.HasSuffix(g[9], "injected fault: HTTP 500") {
		t.Errorf("gamma %v", g)
	}
	t.Logf("csv:\n%s", out)

	js, _, code := runStatus(t, "--admin", adminAddr, "--format", "json")
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(js), &doc) != nil || doc["endpoints"] == nil {
		t.Fatalf("--format json: exit %d\n%s", code, js)
	}
	for _, args := range [][]string{{"--format", "yaml"}, {"--format", ""}, {"--format", "csv", "--json"}, {"--format", "csv", "--requests"}} {
		_, errs, code := runStatus(t, append([]string{"--admin", adminAddr}, args...)...)
		if code != 2 || !strings.Contains(errs, "status: ") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error, exit 2", args, code, errs)
		}
	}
}

// statusRates is each endpoint's rates in GET /v1/status.
func statusRates(t *testing.T, adminAddr string) map[string]struct{ Attempts, RateLimited int64 } {
	t.Helper()
	var s struct {
		Endpoints []struct {
			Name  string `json:"name"`
			Rates struct {
				Attempts    int64 `json:"attempts"`
				RateLimited int64 `json:"rate_limited"`
			} `json:"rates"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(get(t, "http://"+adminAddr+"/v1/status")), &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]struct{ Attempts, RateLimited int64 }{}
	for _, ep := range s.Endpoints {
		out[ep.Name] = struct{ Attempts, RateLimited int64 }{ep.Rates.Attempts, ep.Rates.RateLimited}
	}
	return out
}

// An endpoint answering 429 shows it in the status: the 429% column (the
// console's 429 %, the share of its attempts answered HTTP 429), which
// ERR% does not count, beside ERR% in the table and last in the CSV, whose
// other columns keep their places.
func TestStatus_Shows429RateOfEachEndpoint(t *testing.T) {
	rpcAddr, adminAddr := statusServe(t, "")
	adminPost(t, adminAddr, "/v1/endpoints/alpha/fault", `{"mode":"http429"}`)
	deadline := time.Now().Add(10 * time.Second)
	for statusRates(t, adminAddr)["alpha"].RateLimited == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("alpha answered no 429 in 10s: %+v", statusRates(t, adminAddr))
		}
		tryCall(rpcAddr, "eth_blockNumber")
		time.Sleep(20 * time.Millisecond)
	}
	// share is the status JSON's 429 share of name's attempts, in percent,
	// read before and after the command: the command's figure lies between
	// (probes go on meanwhile).
	share := func(name string) float64 {
		r := statusRates(t, adminAddr)[name]
		if r.Attempts == 0 {
			return 0
		}
		return 100 * float64(r.RateLimited) / float64(r.Attempts)
	}
	between := func(cell string, lo, hi float64) bool {
		v, err := strconv.ParseFloat(cell, 64)
		return err == nil && v >= min(lo, hi)-0.05 && v <= max(lo, hi)+0.05
	}

	// beta's and gamma's 429% reads "0.0" only once they have an attempt
	// (a probe, or a read alpha's 429 failed over): on a loaded machine
	// the table was printed before gamma had any ("-").
	for r := statusRates(t, adminAddr); r["beta"].Attempts == 0 || r["gamma"].Attempts == 0; r = statusRates(t, adminAddr) {
		if time.Now().After(deadline) {
			t.Fatalf("beta or gamma had no attempt in 10s: %+v", r)
		}
		tryCall(rpcAddr, "eth_blockNumber")
		time.Sleep(20 * time.Millisecond)
	}
	t.Setenv("COLUMNS", "120")
	before := share("alpha")
	out, errs, code := runStatus(t, "--admin", adminAddr)
	after := share("alpha")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 5 || !regexp.MustCompile(`^ENDPOINT +PROVIDER +REGION +P50ms +P95ms +P99ms +LAG +ERR% +429% +STATE +NOTES$`).MatchString(lines[1]) {
		t.Fatalf("no 429%% column beside ERR%% in:\n%s", out)
	}
	cells := map[string][]string{}
	for _, l := range lines[2:5] {
		if f := strings.Fields(l); len(f) > 9 {
			cells[f[0]] = f
		}
	}
	if a := cells["alpha"]; a == nil || !between(a[8], before, after) || a[8] == "0.0" {
		t.Errorf("alpha's 429%% %v; the status says %.1f%% then %.1f%% of its attempts were answered 429:\n%s", a, before, after, out)
	}
	for _, name := range []string{"beta", "gamma"} {
		if f := cells[name]; f == nil || f[8] != "0.0" {
			t.Errorf("%s row %v: want 429%% 0.0", name, f)
		}
	}
	t.Logf("table:\n%s", strings.Join(lines[:5], "\n"))

	before = share("alpha")
	out, errs, code = runStatus(t, "--admin", adminAddr, "--format", "csv")
	after = share("alpha")
	if code != 0 {
		t.Fatalf("csv: exit %d: %s", code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("csv: %v:\n%s", err, out)
	}
	if got := strings.Join(recs[0], ","); got != "ENDPOINT,PROVIDER,REGION,P50ms,P95ms,P99ms,LAG,ERR%,STATE,NOTES,429%,LOWER_BOUNDS" {
		t.Fatalf("csv header %s: want 429%% appended after NOTES, then LOWER_BOUNDS", got)
	}
	for _, r := range recs[1:] {
		switch {
		case r[0] == "alpha" && (!between(r[10], before, after) || r[10] == "0.0" || !strings.HasPrefix(r[9], "primary; fault http429")):
			t.Errorf("alpha csv row %q; the status says %.1f%% then %.1f%% answered 429", r, before, after)
		case r[0] != "alpha" && r[10] != "0.0":
			t.Errorf("%s csv row %q: want 429%% 0.0", r[0], r)
		}
	}
	t.Logf("csv:\n%s", out)
}
