package jsonrpc

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

// Valid answers as encoding/json's Valid does: what rpcdash relays as
// JSON, and refuses as not JSON, did not change with the faster check.
func FuzzValidMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":1}`, "\"\xff\"", `"\u00"`, `"\ud800"`, `01`, `-0`, `1e5`, `1E+5`, `1.`, `.5`,
		`[1,]`, `{"a":1,}`, " \t\n\r{}", "{}\x00", "\"a\x01\"", `"\/"`, `nul`, `true `, `[[[[[[[[[[]]]]]]]]]]`, `1 2`,
		"\ufeff{}", `"\u0041\u00e9"`, `-`, `-01`, `1e`, `[1e-7]`, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if std, got := json.Valid(b), Valid(b); std != got {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, std)
		}
	})
}

// Long answers take the check's vector paths, which short fuzz inputs do
// not reach: a 1 MB answer with bytes changed at random is judged the same.
func TestValid_ALongAnswerChangedAtRandomIsJudgedAsEncodingJSONJudgesIt(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":[`)
	for i := 0; len(body) < 1<<20; i++ {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"address":"0x5fbdb2315678afecb367f032d93f642f64180aa3","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"],"data":"0x00000000000000000000000000000000000000000000000000000000000003e8","blockNumber":"0x1b4","logIndex":"0x0","removed":false,"note":"caf\u00e9 \"q\" \/"}`...)
	}
	body = append(body, "]}"...)
	if !Valid(body) || !json.Valid(body) {
		t.Fatal("the unchanged answer is not valid")
	}
	r := rand.New(rand.NewSource(1))
	alphabet := []byte("\"\\{}[],:0123456789abcdefxu \t\n\x00\x01\x1f\x7f\x80\xc3\xa9\xed\xa0\xff.-+eE")
	for range 500 {
		b := append([]byte(nil), body...)
		for k := r.Intn(3) + 1; k > 0; k-- {
			b[r.Intn(len(b))] = alphabet[r.Intn(len(alphabet))]
		}
		if std, got := json.Valid(b), Valid(b); std != got {
			t.Fatalf("a changed 1 MB answer: Valid says %v, encoding/json %v", got, std)
		}
	}
}

// Nesting past maxFastDepth is checked by encoding/json: segmentio's check
// recursed once per level, and 100,000 nested arrays grew rpcdash by 61 MB
// (TestHostile_CodecEdgeCases). The answers stay encoding/json's, 10,000
// levels and no more.
func TestValid_DeepNestingIsJudgedAsEncodingJSONJudgesIt(t *testing.T) {
	nest := func(n int, inner string) []byte {
		return []byte(strings.Repeat("[", n) + inner + strings.Repeat("]", n))
	}
	for _, c := range []struct {
		body []byte
		want bool
	}{
		{nest(maxFastDepth, `"x"`), true},
		{nest(maxFastDepth+1, `"x"`), true},
		{nest(10_000, ""), true},
		{nest(10_001, ""), false},
		{nest(1_000_000, ""), false},
		{[]byte(`["` + strings.Repeat(`[`, 1000) + `"]`), true}, // brackets inside a string
		{[]byte(`["\"` + strings.Repeat(`[`, 1000) + `\\"]`), true},
		{[]byte(`["\\"` + strings.Repeat(`[`, 1000) + `]`), false},
	} {
		if got := Valid(c.body); got != c.want || got != json.Valid(c.body) {
			t.Errorf("Valid(%.40q… %d bytes) = %v, want %v as encoding/json says", c.body, len(c.body), got, c.want)
		}
	}
	if !nestedBeyond(nest(maxFastDepth+1, ""), maxFastDepth) || nestedBeyond(nest(maxFastDepth, ""), maxFastDepth) {
		t.Errorf("nestedBeyond does not count to %d", maxFastDepth)
	}
	if nestedBeyond([]byte(`["`+strings.Repeat(`[`, 1000)+`"]`), maxFastDepth) {
		t.Error("nestedBeyond counts the brackets of a string")
	}
}
