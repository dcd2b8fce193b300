package main

import (
	"errors"
	"fmt"
	"reflect"
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
		key := de.Name()
		val, found := settingAt(settings, key)
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
	secret := strings.HasSuffix(key, "admin_token") || strings.HasPrefix(key, "endpoints[") && strings.HasSuffix(key, ".url")
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
