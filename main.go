// Command rpcdash is a local JSON-RPC router with request hedging and an
// operator console for blockchain RPC endpoints.
//
//	rpcdash [--config FILE]          the engine and its console
//	rpcdash console --attach URL     the console of a running rpcdash serve
//	rpcdash serve [--config FILE]    the engine without the console
//	rpcdash sim [--chain evm] [PRESET ...]  simulated upstreams, standalone
//	rpcdash bench [flags]            open-loop comparison of policies
//	rpcdash drill [flags]            the failover verification plan, automated
//	rpcdash status [--admin ADDR]    the running engine's status
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/benchengine"
	"github.com/rpcdash/rpcdash/probes"
	"github.com/rpcdash/rpcdash/sim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "console"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "console":
		err = cmdConsole(args, stdout, stderr)
	case "serve":
		err = cmdServe(cmd, args, stdout, stderr)
	case "sim":
		err = cmdSim(args, stdout, stderr)
	case "bench":
		err = bench.Main(args, stdio(stdout, stderr), benchengine.Start)
	case "drill":
		err = cmdDrill(args, stdout, stderr)
	case "status":
		err = cmdStatus(args, stdout)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "rpcdash: unknown command %q\n\n%s\n", cmd, usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "rpcdash:", err)
		return 1
	}
	return 0
}

const usage = `usage:
  rpcdash [--config FILE] [--readonly] [--theme NAME|FILE] [--log-file PATH]
                                          the engine and its console in one process
  rpcdash console --attach http://HOST:PORT [--token T] [--readonly] [--theme NAME|FILE]
                                          the console of a running rpcdash serve (its admin API)
  rpcdash serve [--config FILE]           run the engine without the console
  rpcdash sim [--chain evm|solana] [--listen HOST] [scenario flags] [PRESET|sim://URL ...]
                                          run simulated upstreams and print their URLs
  rpcdash bench [--mix M=W,…] [--rate R] [--duration D] [--policies …] [scenario flags]
                [--target URL [--admin URL]] [--format table|markdown|csv|json] [--out FILE]
                                          open-loop comparison of routing and hedging policies
                                          (scenario flags: --median --sigma --tail --tail-min --tail-max
                                          --endpoints --capacity --correlated --incident --seed)
  rpcdash drill [--admin URL --target URL | --breaker-failures N …] [--mode error|timeout|http429|stale|latency]
                [--no-load] [--format text|json]
                                          the failover verification plan, automated: exit 1 naming the failed step
  rpcdash status [--admin ADDR] [--token T]
                                          print a running engine's status`

func cmdServe(name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "config.toml", "config file (TOML)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	sims, err := startSims(&cfg)
	if err != nil {
		return err
	}
	defer sim.CloseAll(sims)

	// Signals are caught before anything listens: a SIGTERM right after
	// start must still shut down gracefully.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	eng, err := engine.New(cfg, engine.Options{Logger: log})
	if err != nil {
		return err
	}
	if err := eng.Start(); err != nil {
		return err
	}
	var prober *probes.Runner
	if cfg.Probes.Enabled {
		if prober, err = probes.NewRunner(eng, eng.Config(), log); err != nil {
			eng.Close()
			return err
		}
		prober.Start()
	}
	fmt.Fprintf(stdout, "rpcdash: JSON-RPC on http://%s  admin on http://%s\n", eng.RPCAddr(), eng.AdminAddr())
	for _, s := range sims {
		fmt.Fprintf(stdout, "rpcdash: simulated upstream %s on %s\n", s.Name(), s.URL())
	}

	sig := <-sigs
	log.Info("shutting down", "signal", sig.String(), "bound", eng.Config().Server.ShutdownTimeout)
	if prober != nil {
		prober.Close()
	}
	if err := eng.Close(); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return nil
}

// loadConfig reads FILE through viper with RPCDASH_* environment overrides,
// rejects unknown keys and bad values naming the key, over engine.Default.
func loadConfig(path string) (engine.Config, error) { return loadConfigData(path, nil) }

// loadConfigData is loadConfig over data (named path in messages) when
// data is not nil: the shipped config embedded in the binary.
func loadConfigData(path string, data []byte) (engine.Config, error) {
	// Decoding over the defaults keeps every zero the file sets explicitly.
	cfg := engine.Default()
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("toml")
	v.SetEnvPrefix("RPCDASH")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	keys := configKeys(reflect.TypeOf(cfg), "")
	for _, key := range keys {
		if err := v.BindEnv(key); err != nil {
			return cfg, err
		}
	}
	read := v.ReadInConfig
	if data != nil {
		read = func() error { return v.ReadConfig(bytes.NewReader(data)) }
	}
	if err := read(); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	hook := viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
	))
	if err := v.UnmarshalExact(&cfg, hook); err != nil {
		msg := strings.ReplaceAll(err.Error(), "'engine.Config' has invalid keys", "unknown top-level keys")
		return cfg, fmt.Errorf("config %s: %s", path, engine.ScrubConfigError(msg, endpointURLs(v)))
	}
	if err := validateSimURLs(cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// configKeys lists the dotted keys of every scalar config field, so that
// RPCDASH_SERVER_LISTEN and friends override even keys the file omits.
func configKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == "" {
			continue
		}
		switch f.Type.Kind() {
		case reflect.Struct:
			keys = append(keys, configKeys(f.Type, prefix+tag+".")...)
		case reflect.Slice:
			if f.Type.Elem().Kind() == reflect.String {
				keys = append(keys, prefix+tag)
			}
		case reflect.Map:
		default:
			keys = append(keys, prefix+tag)
		}
	}
	return keys
}

func endpointURLs(v *viper.Viper) []string {
	var urls []string
	if list, ok := v.Get("endpoints").([]any); ok {
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				if s, ok := m["url"].(string); ok {
					urls = append(urls, s)
				}
			}
		}
	}
	return urls
}

// validateSimURLs checks every sim:// URL, then the whole config as the
// engine will see it once the sims run, so that every config error names its
// key before anything listens (startSims would otherwise trip over a bad
// chain.kind first).
func validateSimURLs(cfg engine.Config) error {
	cfg.Endpoints = slices.Clone(cfg.Endpoints)
	for i, ep := range cfg.Endpoints {
		if strings.HasPrefix(ep.URL, "sim://") {
			if _, err := sim.ParseURL(ep.URL); err != nil {
				return fmt.Errorf("invalid config:\n  endpoints[%d].url: %v", i, err)
			}
			cfg.Endpoints[i].URL = "http://127.0.0.1:1" // a stand-in, never dialled
		}
	}
	return cfg.Validate()
}

// startSims starts every sim:// endpoint on loopback and rewrites its URL to
// the real address, so the shipped config works with no provider at all.
func startSims(cfg *engine.Config) ([]*sim.Upstream, error) {
	var cfgs []sim.Config
	var idx []int
	for i, ep := range cfg.Endpoints {
		if !strings.HasPrefix(ep.URL, "sim://") {
			continue
		}
		sc, err := sim.ParseURL(ep.URL)
		if err != nil {
			return nil, fmt.Errorf("endpoints[%d].url: %v", i, err)
		}
		if u, _ := url.Parse(ep.URL); u.Query().Get("name") == "" { // a preset names itself
			sc.Name = ep.Name
		}
		if sc.Chain == "" { // only the query sets it
			sc.Chain = cfg.Chain.Kind
		}
		cfgs = append(cfgs, sc)
		idx = append(idx, i)
	}
	if len(cfgs) == 0 {
		return nil, nil
	}
	ups, err := sim.StartSet(cfgs, "127.0.0.1")
	if err != nil {
		return nil, err
	}
	for k, i := range idx {
		cfg.Endpoints[i].URL = ups[k].URL()
	}
	return ups, nil
}

func cmdStatus(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
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
