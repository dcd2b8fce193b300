package main

import (
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"

	"github.com/rpcdash/rpcdash/engine"
)

// keepGoodMapEntries puts back what the decoder dropped with a bad value
// inside a map: it drops a whole entry when one of its values fails, so
// the other keys of a [hedge.methods.<method>] table went unjudged
// (quantile = 1.5 beside enabled = "no" was never reported). A table entry
// is decoded again without its bad keys, which keep their zero value (as
// if not set); an entry of a map of values (methods.weights) whose value
// was bad is left out, as if not set.
func keepGoodMapEntries(cfg *engine.Config, settings map[string]any, badKeys map[string]bool, hook mapstructure.DecodeHookFunc) {
	bad := map[string][]string{} // an entry's key → its bad keys
	for key := range badKeys {
		if entry, field, ok := mapEntryOf(reflect.TypeOf(*cfg), key); ok {
			bad[entry] = append(bad[entry], field)
		}
	}
	root := reflect.ValueOf(cfg).Elem()
	for entry, fields := range bad {
		i := strings.LastIndexByte(entry, '.')
		m, name := valueAt(root, entry[:i]), entry[i+1:]
		if !m.IsValid() || m.Kind() != reflect.Map {
			continue
		}
		raw, ok := settingAt(settings, entry)
		table, isTable := raw.(map[string]any)
		if !ok || m.Type().Elem().Kind() != reflect.Struct || !isTable {
			if !m.IsNil() {
				m.SetMapIndex(reflect.ValueOf(name), reflect.Value{})
			}
			continue
		}
		good := make(map[string]any, len(table))
		for k, v := range table {
			good[k] = v
		}
		for _, f := range fields {
			delete(good, f)
		}
		out := reflect.New(m.Type().Elem())
		dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{DecodeHook: hook, WeaklyTypedInput: true, Result: out.Interface()})
		if err != nil || dec.Decode(good) != nil {
			continue // the bad keys were all named: nothing else can fail
		}
		if m.IsNil() {
			m.Set(reflect.MakeMap(m.Type()))
		}
		m.SetMapIndex(reflect.ValueOf(name), out.Elem())
	}
}

// mapEntryOf splits a key inside a map's entry into the entry's key and
// the rest: "hedge.methods.eth_call.enabled" is entry
// "hedge.methods.eth_call", field "enabled"; "methods.weights.eth_call" is
// entry "methods.weights.eth_call", field "". ok is false for a key in no
// map.
func mapEntryOf(t reflect.Type, key string) (entry, field string, ok bool) {
	steps := keyPath(key)
	for i, step := range steps {
		if t == nil {
			return "", "", false
		}
		if t.Kind() == reflect.Map {
			return strings.Join(steps[:i+1], "."), strings.Join(steps[i+1:], "."), true
		}
		if t.Kind() != reflect.Struct {
			return "", "", false
		}
		t = stepType(t, step)
	}
	return "", "", false
}
