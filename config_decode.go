package main

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"

	"github.com/rpcdash/rpcdash/engine"
)

// decodeProblems turns the decoder's joined errors into one problem per
// key, each naming the key, the value given and what the key takes,
// rather than mapstructure's Go-typed text.
func decodeProblems(err error, cfgType reflect.Type, settings map[string]any) []engine.ConfigProblem {
	var out []engine.ConfigProblem
	for _, de := range leafDecodeErrors(err) {
		if de == nil {
			out = append(out, engine.ConfigProblem{Key: "config", Why: err.Error()})
			continue
		}
		key := dottedKey(cfgType, de.Name())
		val, found := settingAt(settings, key)
		if list := listOf(key); !found && list != key {
			// A table given for a list is an item to the decoder
			// (methods.no_hedge[0]); it is the list's value that is wrong.
			if v, ok := settingAt(settings, list); ok {
				key, val, found = list, v, true
			}
		}
		t := fieldTypeAt(cfgType, key)
		switch {
		case !found || t == nil:
			out = append(out, engine.ConfigProblem{Key: key, Why: de.Unwrap().Error()})
		default:
			out = append(out, engine.ConfigProblem{Key: key, Why: showValue(key, val) + " is not " + expected(key, t)})
		}
	}
	return out
}

// leafDecodeErrors flattens mapstructure's tree of joined errors (a struct
// joins its fields', a field wraps its section's) into the innermost
// DecodeError of each bad value; an error of another kind is a nil entry.
func leafDecodeErrors(err error) []*mapstructure.DecodeError {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*mapstructure.DecodeError
		for _, e := range joined.Unwrap() {
			out = append(out, leafDecodeErrors(e)...)
		}
		return out
	}
	de, ok := err.(*mapstructure.DecodeError)
	if !ok {
		if inner := errors.Unwrap(err); inner != nil { // viper's wrapping
			return leafDecodeErrors(inner)
		}
		return []*mapstructure.DecodeError{nil}
	}
	inner := de.Unwrap()
	var deeper *mapstructure.DecodeError
	if _, joined := inner.(interface{ Unwrap() []error }); joined || errors.As(inner, &deeper) {
		return leafDecodeErrors(inner)
	}
	return []*mapstructure.DecodeError{de}
}

// keyPath splits "endpoints[0].url" or "methods.weights[eth_call]" into
// its steps.
func keyPath(key string) []string {
	var out []string
	for _, part := range strings.Split(key, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				out = append(out, part[i+1:])
				break
			}
			out = append(out, part[i+1:i+j])
			part = part[i+j+1:]
		}
	}
	return out
}

// dottedKey writes the decoder's name of a key as the README does: a map's
// entry dotted (methods.timeouts.eth_call, not methods.timeouts[eth_call]),
// a list's item indexed (endpoints[0].url).
func dottedKey(t reflect.Type, name string) string {
	var b strings.Builder
	for i, step := range keyPath(name) {
		switch {
		case i == 0:
		case t != nil && t.Kind() == reflect.Slice:
			b.WriteString("[" + step + "]")
			t = t.Elem()
			continue
		default:
			b.WriteString(".")
		}
		b.WriteString(step)
		t = stepType(t, step)
	}
	return b.String()
}

// stepType is the type one step of a key below t leads to, nil when t has
// no such step.
func stepType(t reflect.Type, step string) reflect.Type {
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nil:
		return nil
	case t.Kind() == reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).Tag.Get("mapstructure") == step {
				return t.Field(i).Type
			}
		}
		return nil
	case t.Kind() == reflect.Map:
		return t.Elem()
	}
	return nil
}

// settingAt is the raw value viper holds at key.
func settingAt(settings map[string]any, key string) (any, bool) {
	var cur any = settings
	for _, step := range keyPath(key) {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[strings.ToLower(step)]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		case []map[string]any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// fieldTypeAt is the Go type of the config field key decodes into.
func fieldTypeAt(t reflect.Type, key string) reflect.Type {
	for _, step := range keyPath(key) {
		switch t.Kind() {
		case reflect.Struct:
			var next reflect.Type
			for i := 0; i < t.NumField(); i++ {
				if t.Field(i).Tag.Get("mapstructure") == step {
					next = t.Field(i).Type
				}
			}
			if next == nil {
				return nil
			}
			t = next
		case reflect.Slice, reflect.Map, reflect.Pointer:
			t = t.Elem()
		default:
			return nil
		}
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// showValue shows a bad value: strings quoted (URLs redacted), numbers and
// booleans as they are, lists and tables by kind; a secret key's value
// is never shown.
func showValue(key string, v any) string {
	secret := strings.HasSuffix(key, "admin_token") || strings.HasPrefix(key, "endpoints[") && (strings.HasSuffix(key, ".url") || strings.HasSuffix(key, ".proxy"))
	switch x := v.(type) {
	case string:
		if secret {
			return "the value given"
		}
		return engine.ShowConfigValue(x)
	case []any, []string:
		return "a list"
	case map[string]any:
		return "a table"
	case nil:
		return "an empty value"
	}
	if secret {
		return "the value given"
	}
	return fmt.Sprint(v) // a number or a boolean
}

// expected says what a key of type t takes.
func expected(key string, t reflect.Type) string {
	if key == "chain.chain_id" {
		return "a chain id: a whole number from 1 (0 or unset: the pool's majority decides)"
	}
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		return "a duration (e.g. 10s, 250ms)"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return "a whole number"
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		return "a whole number from 0"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "a list of strings (or one comma-separated string)"
	case t.Kind() == reflect.Slice:
		return "a list of tables ([[" + key + "]])"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return "a table ([" + key + "])"
	}
	return "a " + t.String()
}

// durationsWithUnits refuses a bare number for a duration key, which the
// weakly typed decoder takes as nanoseconds: request_timeout = 5 was 5 ns,
// and a methods.timeouts entry of 5 failed every call of its method at
// once. 0 is 0 whatever the unit.
func durationsWithUnits() mapstructure.DecodeHookFuncType {
	return func(_ reflect.Type, t reflect.Type, data any) (any, error) {
		if t != reflect.TypeOf(time.Duration(0)) {
			return data, nil
		}
		v := reflect.ValueOf(data)
		switch {
		case !v.IsValid():
		case v.CanInt() && v.Int() != 0, v.CanUint() && v.Uint() != 0, v.CanFloat() && v.Float() != 0:
			return nil, errors.New("a number without a unit")
		}
		return data, nil
	}
}

// commaList splits a text value given to a list key (every environment
// value is text) at its commas, each item trimmed of the spaces around it:
// RPCDASH_SERVER_CORS_ORIGINS="http://a.example, http://b.example" kept
// the space before the second origin and refused it as unparseable.
func commaList() mapstructure.DecodeHookFuncType {
	return func(f reflect.Type, t reflect.Type, data any) (any, error) {
		s, ok := data.(string)
		if !ok || f.Kind() != reflect.String || t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.String {
			return data, nil
		}
		if s == "" {
			return []string{}, nil
		}
		items := strings.Split(s, ",")
		for i := range items {
			items[i] = strings.TrimSpace(items[i])
		}
		return items, nil
	}
}

// wholeNumbersOnly refuses what the weakly typed decoder would otherwise
// bend: a negative number for an unsigned key (chain.chain_id = -1 became
// 0xffffffffffffffff) and a fraction for a whole-number key (1.5 became 1).
func wholeNumbersOnly() mapstructure.DecodeHookFuncType {
	return func(_ reflect.Type, t reflect.Type, data any) (any, error) {
		unsigned := t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64
		signed := t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64 && t != reflect.TypeOf(time.Duration(0))
		if !unsigned && !signed {
			return data, nil
		}
		v := reflect.ValueOf(data)
		switch {
		case !v.IsValid():
		case unsigned && v.CanInt() && v.Int() < 0:
			return nil, errors.New("negative")
		case v.CanFloat() && (v.Float() != float64(int64(v.Float())) || unsigned && v.Float() < 0):
			return nil, errors.New("not a whole number")
		}
		return data, nil
	}
}

// fileTypeProblems finds the values the file gives as another TOML type
// than their key takes: `failures = "4"`, `enabled = "true"`, `listen =
// true`. The decoder converts such values (it must: the environment's are
// all text), so the file's are checked on their own, before it.
func fileTypeProblems(t reflect.Type, settings map[string]any, prefix string) []engine.ConfigProblem {
	var out []engine.ConfigProblem
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("mapstructure")
		val, ok := settings[tag]
		if tag == "" || !ok {
			continue
		}
		key, ft := prefix+tag, t.Field(i).Type
		switch {
		case ft.Kind() == reflect.Struct:
			if m, ok := val.(map[string]any); ok {
				out = append(out, fileTypeProblems(ft, m, key+".")...)
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			for j, el := range sections(val) {
				out = append(out, fileTypeProblems(ft.Elem(), el, fmt.Sprintf("%s[%d].", key, j))...)
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			out = append(out, listTypeProblems(key, ft, val)...)
		case ft.Kind() == reflect.Map:
			out = append(out, mapTypeProblems(key, ft, val)...)
		case !fileTypeFits(ft, val):
			out = append(out, engine.ConfigProblem{Key: key, Why: showValue(key, val) + " is " + tomlType(val) + ", not " + expected(key, ft) + fileTypeHint(ft, val)})
		}
	}
	return out
}

// listTypeProblems checks a list of strings (methods.no_hedge,
// server.vhosts), which the decoder would build from any value: 5 became
// ["5"], false ["0"], [5, true] ["5", "1"]. One string is a comma-separated
// list; each item of a list must be a string.
func listTypeProblems(key string, t reflect.Type, val any) []engine.ConfigProblem {
	switch v := val.(type) {
	case string, map[string]any: // a table the decoder refuses itself
		return nil
	case []any:
		var out []engine.ConfigProblem
		for i, item := range v {
			if !fileTypeFits(t.Elem(), item) {
				k := fmt.Sprintf("%s[%d]", key, i)
				out = append(out, engine.ConfigProblem{Key: k, Why: showValue(k, item) + " is " + tomlType(item) + ", not a string" + fileTypeHint(t.Elem(), item)})
			}
		}
		return out
	}
	return []engine.ConfigProblem{{Key: key, Why: showValue(key, val) + " is " + tomlType(val) + ", not " + expected(key, t)}}
}

// mapTypeProblems checks the entries of a map: each table of
// [hedge.methods.<method>] key by key, each value of [methods.weights]
// (quantile = "0.5" and eth_call = "2" were taken as numbers).
func mapTypeProblems(key string, t reflect.Type, val any) []engine.ConfigProblem {
	m, ok := val.(map[string]any)
	if !ok {
		return nil // not a table: the decoder refuses it itself
	}
	var out []engine.ConfigProblem
	for _, name := range slices.Sorted(maps.Keys(m)) {
		k := key + "." + name
		switch entry, isTable := m[name].(map[string]any); {
		case t.Elem().Kind() == reflect.Struct && isTable:
			out = append(out, fileTypeProblems(t.Elem(), entry, k+".")...)
		case t.Elem().Kind() != reflect.Struct && !fileTypeFits(t.Elem(), m[name]):
			out = append(out, engine.ConfigProblem{Key: k, Why: showValue(k, m[name]) + " is " + tomlType(m[name]) + ", not " + expected(k, t.Elem()) + fileTypeHint(t.Elem(), m[name])})
		}
	}
	return out
}

// sections are a list of tables as viper reads one.
func sections(val any) []map[string]any {
	switch l := val.(type) {
	case []map[string]any:
		return l
	case []any:
		var out []map[string]any
		for _, el := range l {
			if m, ok := el.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// fileTypeFits says whether a value read from TOML has a type the field
// takes. Durations and numbers' wholeness are the decode hooks' to judge
// (their messages say more); lists of strings are listTypeProblems'.
func fileTypeFits(t reflect.Type, val any) bool {
	if t == reflect.TypeOf(time.Duration(0)) {
		return true
	}
	switch val.(type) {
	case []any, map[string]any:
		return true // the decoder refuses these itself
	}
	switch t.Kind() {
	case reflect.Bool:
		_, ok := val.(bool)
		return ok
	case reflect.String:
		_, ok := val.(string)
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		switch val.(type) {
		case int, int64, float64:
			return true
		}
		return false
	}
	return true
}

func tomlType(val any) string {
	switch val.(type) {
	case string:
		return "text"
	case bool:
		return "a boolean"
	case int, int64, float64:
		return "a number"
	}
	return "a " + fmt.Sprintf("%T", val)
}

// fileTypeHint says how to write a value the field t takes. Quoting helps
// only a field that takes text: "quote it" said of enabled = 1 or
// failures = true led to a second error ("1" is text, not true or false).
func fileTypeHint(t reflect.Type, val any) string {
	switch {
	case t.Kind() == reflect.String:
		return " (quote it)"
	case isText(val):
		return " (write it without quotes)"
	}
	return ""
}

func isText(val any) bool {
	_, ok := val.(string)
	return ok
}

// valueAt is the settable field a key names in the config v points into,
// or an invalid Value.
func valueAt(v reflect.Value, key string) reflect.Value {
	for _, step := range keyPath(key) {
		switch v.Kind() {
		case reflect.Struct:
			next := reflect.Value{}
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).Tag.Get("mapstructure") == step {
					next = v.Field(i)
				}
			}
			v = next
		case reflect.Slice:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= v.Len() {
				return reflect.Value{}
			}
			v = v.Index(i)
		default:
			return reflect.Value{}
		}
		if !v.IsValid() {
			return v
		}
	}
	return v
}
