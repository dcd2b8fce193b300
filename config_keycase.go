package main

import (
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/rpcdash/rpcdash/engine"
)

// viper lower-cases every key, so a problem with a method's table named it
// as the file did not: [hedge.methods.eth_sendRawTransaction] came out as
// hedge.methods.eth_sendrawtransaction (Ethereum method names are
// camelCase). The tables keyed by name ([hedge.methods], [methods.weights],
// [methods.timeouts]) are matched without regard to case, which stays so;
// only the messages take the file's spelling back, read with the TOML
// library viper itself uses.

// fileAsWritten is the file's settings with its keys as spelt there (nil
// when it does not parse: that is viper's to report). A URL in it as
// spelt is one to scrub from messages (urlsIn) once they name keys so.
func fileAsWritten(data []byte) map[string]any {
	var file map[string]any
	if toml.Unmarshal(data, &file) != nil {
		return nil
	}
	return file
}

// writtenKeys maps each table keyed by name (its key, lower case, as
// "hedge.methods") to its keys as the file spells them, by their lower
// case.
func writtenKeys(file map[string]any) map[string]map[string]string {
	out := map[string]map[string]string{}
	collectWritten(reflect.TypeOf(engine.Config{}), file, "", out)
	return out
}

func collectWritten(t reflect.Type, table map[string]any, prefix string, out map[string]map[string]string) {
	for k, v := range table {
		key := prefix + strings.ToLower(k)
		ft := stepType(t, strings.ToLower(k))
		if ft != nil && ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		sub, ok := v.(map[string]any)
		switch {
		case !ok || ft == nil:
		case ft.Kind() == reflect.Map:
			names := out[key]
			if names == nil {
				names = map[string]string{}
				out[key] = names
			}
			for name := range sub {
				if lower := strings.ToLower(name); lower != name {
					names[lower] = name
				}
			}
		case ft.Kind() == reflect.Struct:
			collectWritten(ft, sub, key+".", out)
		}
	}
}

// withKeysAsWritten names the entries of the tables keyed by name as the
// file spells them, in each problem's key and message.
func withKeysAsWritten(problems []engine.ConfigProblem, written map[string]map[string]string) []engine.ConfigProblem {
	for i, p := range problems {
		for table, names := range written {
			for lower, name := range names {
				entry := table + "." + lower
				p.Why = replaceToken(p.Why, entry, table+"."+name)
				if p.Key == entry || strings.HasPrefix(p.Key, entry+".") {
					p.Key = table + "." + name + p.Key[len(entry):]
					// The message may name the entry alone
					// ("eth_sendrawtransaction is a write").
					p.Why = replaceToken(p.Why, lower, name)
				}
			}
		}
		problems[i] = p
	}
	return problems
}

// replaceToken replaces old in s where it stands as a whole key: not
// inside a longer name, nor after a dot (another table's entry); a key
// below it may follow.
func replaceToken(s, old, repl string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		if (i == 0 || !nameByte(s[i-1]) && s[i-1] != '.') && (end == len(s) || !nameByte(s[end])) {
			b.WriteString(s[:i] + repl)
		} else {
			b.WriteString(s[:end])
		}
		s = s[end:]
	}
}

func nameByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
