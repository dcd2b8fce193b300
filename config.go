package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/probes"
)

// loadConfig reads FILE through viper with RPCDASH_* environment overrides
// over engine.Default, and rejects unknown keys and bad values naming each
// key.
func loadConfig(path string) (engine.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return engine.Default(), fmt.Errorf("config %s: %w", path, err)
	}
	return loadConfigData(path, data)
}

// loadUIConfigData reads only the [ui] section of data (the file named
// path in messages), and RPCDASH_UI_*, checked as loadConfig checks them:
// an attached console takes nothing else from the file, so the other
// sections are neither read nor judged.
func loadUIConfigData(path string, data []byte) (engine.UIConfig, error) {
	def := engine.Default().UI
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return def, syntaxError(path, data, err)
	}
	var ui []byte
	if section := v.Get("ui"); section != nil {
		var err error
		if ui, err = toml.Marshal(map[string]any{"ui": section}); err != nil {
			return def, fmt.Errorf("config %s: [ui]: %w", path, err)
		}
	}
	cfg, err := decodeConfig(path, ui, "ui")
	return cfg.UI, err
}

// fileSettings are the file's own settings, with their TOML types: what
// the environment overrides and the decoder converts is not in them.
func fileSettings(data []byte) (map[string]any, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return v.AllSettings(), nil
}

// loadConfigData is loadConfig over data, named path in messages (the
// shipped config embedded in the binary, or the file read).
func loadConfigData(path string, data []byte) (engine.Config, error) {
	return decodeConfig(path, data, "")
}

// decodeConfig is loadConfigData; with a section ("ui"), only that
// section's keys and variables are read and only its values judged.
func decodeConfig(path string, data []byte, section string) (engine.Config, error) {
	inSection := func(key string) bool {
		return section == "" || key == section || strings.HasPrefix(key, section+".")
	}
	// Decoding over the defaults keeps every zero the file sets explicitly.
	cfg := engine.Default()
	v := viper.New()
	v.SetConfigType("toml")
	// Each key is bound to its variable by name (envName): viper's prefix
	// and key replacer apply only to AutomaticEnv, which is not used.
	keys := slices.DeleteFunc(configKeys(reflect.TypeOf(cfg), ""), func(k string) bool { return !inSection(k) })
	for _, key := range keys {
		if err := v.BindEnv(key, envName(key)); err != nil {
			return cfg, err
		}
	}
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return cfg, syntaxError(path, data, err)
	}
	environ := os.Environ()
	if section != "" {
		environ = slices.DeleteFunc(environ, func(kv string) bool { return !strings.HasPrefix(kv, envName(section)+"_") })
	}
	problems := unknownEnv(environ, keys)
	fileTypes, err := fileSettings(data)
	if err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	typeProblems := fileTypeProblems(reflect.TypeOf(cfg), fileTypes, "")
	if top, nested := unknownKeys(reflect.TypeOf(cfg), v.AllSettings(), ""); len(top)+len(nested) > 0 {
		if len(top) > 0 {
			problems = append(problems, engine.ConfigProblem{Why: "unknown top-level keys: " + strings.Join(top, ", ")})
		}
		if len(nested) > 0 {
			problems = append(problems, engine.ConfigProblem{Why: "unknown keys: " + strings.Join(nested, ", ")})
		}
	}
	hook := mapstructure.ComposeDecodeHookFunc(
		wholeNumbersOnly(),
		durationsWithUnits(),
		mapstructure.StringToTimeDurationHookFunc(),
		commaList(),
	)
	// Decoding goes on past a bad value (mapstructure joins every field's
	// error); the keys that failed keep their default, so the validation
	// below runs on the rest and every error is reported at once.
	badKeys := map[string]bool{}
	if err := v.Unmarshal(&cfg, viper.DecodeHook(hook)); err != nil {
		for _, d := range decodeProblems(err, reflect.TypeOf(cfg), v.AllSettings()) {
			badKeys[d.Key] = true
			problems = append(problems, d)
		}
	}
	// The values of the wrong type the decoder converted rather than
	// refused ("4" for a whole number); those it refused it has named.
	typeProblems = slices.DeleteFunc(typeProblems, func(p engine.ConfigProblem) bool { return badKeys[p.Key] })
	for _, p := range typeProblems {
		badKeys[p.Key] = true
		badKeys[listOf(p.Key)] = true
		problems = append(problems, p)
	}
	// A value of the wrong type was converted by the decoder: it keeps the
	// default, as a value that failed to decode does, so that validation
	// does not judge what the file did not say (server.listen = true read
	// as "1", then "not a loopback address").
	def := reflect.ValueOf(engine.Default())
	for _, p := range typeProblems {
		key := listOf(p.Key) // a bad item: the whole list keeps its default
		if f, d := valueAt(reflect.ValueOf(&cfg).Elem(), key), valueAt(def, key); f.IsValid() && f.CanSet() {
			if d.IsValid() {
				f.Set(d)
			} else {
				f.SetZero()
			}
		}
	}
	keepGoodMapEntries(&cfg, v.AllSettings(), badKeys, hook)
	for _, p := range validationProblems(cfg) {
		if !badKeys[p.Key] && inSection(p.Key) {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		written := fileAsWritten(data)
		problems = withKeysAsWritten(problems, writtenKeys(written))
		urls := append(endpointURLs(v), urlsIn(v.AllSettings())...)
		return cfg, configError(path, problems, append(urls, urlsIn(written)...))
	}
	return cfg, nil
}

// listOf is the list key of an item's key (server.vhosts for
// server.vhosts[0]); any other key is itself.
func listOf(key string) string {
	if i := strings.LastIndexByte(key, '['); i > 0 && strings.HasSuffix(key, "]") {
		return key[:i]
	}
	return key
}

// configError is every problem of a config on a line of its own, each
// that the environment set naming its variable.
func configError(path string, problems []engine.ConfigProblem, urls []string) error {
	lines := make([]string, len(problems))
	fromEnv := false
	keys := configKeys(reflect.TypeOf(engine.Config{}), "")
	for i, p := range problems {
		lines[i] = p.String()
		if p.Key == "" {
			continue
		}
		// Another key the message names may be the environment's too
		// (server.admin_token: required: server.admin "0.0.0.0:1" …).
		why := p.Why
		for _, k := range keys {
			if env := envOf(k); env != "" && k != listOf(p.Key) {
				if named, ok := nameEnv(why, k, env); ok {
					why, fromEnv = named, true
				}
			}
		}
		key := p.Key
		if env := envOf(listOf(p.Key)); env != "" { // an item's: its list's
			key, fromEnv = key+" (from "+env+")", true
		}
		lines[i] = key + ": " + why
	}
	where := path
	if fromEnv {
		where += " and the environment"
	}
	// Decoders may quote an offending value, which may be a URL's secret.
	msg := fmt.Sprintf("invalid config (%s):\n  %s", where, strings.Join(lines, "\n  "))
	return errors.New(engine.ScrubConfigError(msg, urls))
}

// nameEnv adds "(from ENV)" after the first mention of key in text, a
// whole key only (server.admin, not server.admin_token).
func nameEnv(text, key, env string) (string, bool) {
	keyByte := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.'
	}
	for from := 0; ; {
		i := strings.Index(text[from:], key)
		if i < 0 {
			return text, false
		}
		i += from
		end := i + len(key)
		if (i == 0 || !keyByte(text[i-1])) && (end == len(text) || !keyByte(text[end]) || text[end] == '.') {
			return text[:end] + " (from " + env + ")" + text[end:], true
		}
		from = end
	}
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

// unknownKeys are the keys of settings (viper's, lower-cased) that no field
// of t names: at the top level, and below it as full keys
// ("hedge.bogus", "endpoints[0].weight"), each list sorted.
func unknownKeys(t reflect.Type, settings map[string]any, prefix string) (top, nested []string) {
	fields := map[string]reflect.Type{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("mapstructure"); tag != "" {
			fields[tag] = t.Field(i).Type
			names = append(names, tag)
		}
	}
	for key, val := range settings {
		ft, ok := fields[key]
		switch {
		case !ok && prefix == "":
			top = append(top, key+didYouMean(key, names, prefix))
		case !ok:
			nested = append(nested, prefix+key+didYouMean(key, names, prefix))
		default:
			nested = append(nested, unknownBelow(ft, val, prefix+key)...)
		}
	}
	sort.Strings(top)
	sort.Strings(nested)
	return top, nested
}

// didYouMean names the key of the same section an unknown key is a typo
// of ("server.request_timout" for request_timeout), "" when none is near.
func didYouMean(key string, siblings []string, prefix string) string {
	edits := 2 // "dealy" for delay
	if len(key) < 4 {
		edits = 1
	}
	if near := closestKey(key, edits, siblings); near != "" {
		return " (did you mean " + prefix + near + "?)"
	}
	return ""
}

// unknownBelow checks a value whose field has type t: a section (struct),
// a list of sections ([[endpoints]]) or a map of sections
// ([hedge.methods.<method>]); anything else has no keys of its own.
func unknownBelow(t reflect.Type, val any, key string) []string {
	var out []string
	switch {
	case t.Kind() == reflect.Struct:
		if m, ok := val.(map[string]any); ok {
			_, out = unknownKeys(t, m, key+".")
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		if list, ok := val.([]any); ok {
			for i, item := range list {
				if m, ok := item.(map[string]any); ok {
					_, n := unknownKeys(t.Elem(), m, fmt.Sprintf("%s[%d].", key, i))
					out = append(out, n...)
				}
			}
		}
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		if m, ok := val.(map[string]any); ok {
			for name, item := range m {
				out = append(out, unknownBelow(t.Elem(), item, key+"."+name)...)
			}
		}
	}
	return out
}

func endpointURLs(v *viper.Viper) []string {
	var urls []string
	if list, ok := v.Get("endpoints").([]any); ok {
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				for _, key := range []string{"url", "proxy"} {
					if s, ok := m[key].(string); ok {
						urls = append(urls, s)
					}
				}
			}
		}
	}
	return urls
}

// urlsIn are the strings of settings, keys and values, that hold a URL,
// whose secrets configError scrubs wherever a message shows one: a key
// names a method (methods.weights."https://…/KEY") and is shown as it is.
func urlsIn(settings any) []string {
	var out []string
	switch x := settings.(type) {
	case string:
		if strings.Contains(x, "://") {
			out = append(out, x)
		}
	case map[string]any:
		for k, v := range x {
			out = append(out, urlsIn(k)...)
			out = append(out, urlsIn(v)...)
		}
	case []any:
		for _, v := range x {
			out = append(out, urlsIn(v)...)
		}
	case []map[string]any:
		for _, v := range x {
			out = append(out, urlsIn(v)...)
		}
	}
	return out
}

// validationProblems checks every sim:// URL, then the whole config as
// the engine will see it once the sims run, and the probes' settings, so
// that every config error names its key before anything listens (starting
// the sims would otherwise trip over a bad chain.kind first). A bad sim URL
// hides nothing else.
func validationProblems(cfg engine.Config) []engine.ConfigProblem {
	_, problems := parseSims(cfg)
	cfg.Endpoints = slices.Clone(cfg.Endpoints)
	for i, ep := range cfg.Endpoints {
		if isSim(ep.URL) {
			cfg.Endpoints[i].URL = "http://127.0.0.1:1" // a stand-in, never dialled
		}
	}
	problems = append(problems, cfg.Problems()...)
	return append(problems, probes.ConfigProblems(cfg.Probes)...)
}

// outOfRange finds strconv's range error in go-toml's text.
var outOfRange = regexp.MustCompile(`strconv\.(Parse\w+): parsing "[^"]*": value out of range`)

// syntaxError names where in the file a TOML syntax error is: viper's
// message ("While parsing config: toml: expected newline but got U+0073
// 's'") does not say which of a long file's lines it is. The line itself
// is not quoted: it may hold a URL with a key in it.
func syntaxError(path string, data []byte, err error) error {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		// A key or table defined twice: go-toml says which, not where.
		cause := err
		for errors.Unwrap(cause) != nil {
			cause = errors.Unwrap(cause)
		}
		if row, col, key, ok := redefinition(data, cause); ok {
			msg := strings.TrimPrefix(cause.Error(), "toml: ")
			return fmt.Errorf("config %s: line %d, column %d: %s (at key %s)", path, row, col, msg, strings.Join(key, "."))
		}
		return fmt.Errorf("config %s: %w", path, err)
	}
	row, col := de.Position()
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	// A number past what TOML holds: go-toml's words were strconv's
	// (`couldn't parse decimal number: strconv.ParseInt: parsing "999…":
	// value out of range`), and it keeps only their text, not the error.
	if m := outOfRange.FindStringSubmatch(msg); m != nil {
		// go-toml's text drops a literal's 0x, 0o or 0b: the value it
		// quotes may not be the one written, so none is shown.
		if m[1] == "ParseFloat" {
			msg = fmt.Sprintf("the number is out of range: a number is at most ±%.1e", math.MaxFloat64)
		} else {
			msg = fmt.Sprintf("the number is out of range: a whole number is from %d to %d", int64(math.MinInt64), int64(math.MaxInt64))
		}
	}
	key := de.Key()
	if len(key) == 0 {
		key = keyOnLine(data, row)
	}
	if len(key) > 0 {
		msg += " (at key " + strings.Join(key, ".") + ")"
	}
	return fmt.Errorf("config %s: line %d, column %d: %s", path, row, col, msg)
}
