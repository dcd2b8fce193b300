package jsonrpc

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSameID_ByValueWhateverTheSpelling(t *testing.T) {
	same := [][2]string{
		{`1`, `1.0`}, {`1`, `1e0`}, {`100`, `1e2`}, {`100`, `1E+2`}, {`0.5`, `5e-1`}, {`0`, `-0`}, {`0`, `0.0e7`},
		{`-7`, `-7.00`}, {`12345678901234567890`, `1234567890123456789e1`}, {`"a"`, `"\u0061"`}, {`"a\nb"`, `"a\u000ab"`},
		{`"\/"`, `"/"`}, {`null`, `null`},
	}
	differ := [][2]string{
		{`1`, `"1"`}, {`1`, `-1`}, {`1`, `1.5`}, {`1e999999`, `2e999999`}, {`1e40`, `1e41`}, {`0.1`, `0.01`},
		{`"a"`, `"A"`}, {`null`, `0`}, {`true`, `1`},
	}
	for _, p := range same {
		if !SameID(json.RawMessage(p[0]), json.RawMessage(p[1])) {
			t.Errorf("%s and %s: want the same id (%q, %q)", p[0], p[1], CanonicalID(json.RawMessage(p[0])), CanonicalID(json.RawMessage(p[1])))
		}
	}
	for _, p := range differ {
		if SameID(json.RawMessage(p[0]), json.RawMessage(p[1])) {
			t.Errorf("%s and %s: want different ids (both %q)", p[0], p[1], CanonicalID(json.RawMessage(p[0])))
		}
	}
}

// Numbers are the same id exactly when they are the same rational, on
// random spellings of random values.
func TestSameID_NumbersAgreeWithExactRationals(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	spell := func() string {
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.Itoa(r.IntN(30)))
		if r.IntN(2) == 0 {
			b.WriteString("." + strings.Repeat("0", r.IntN(3)) + strconv.Itoa(r.IntN(30)))
		}
		if r.IntN(2) == 0 {
			b.WriteString("e" + strconv.Itoa(r.IntN(9)-4))
		}
		return b.String()
	}
	for range 20000 {
		a, b := spell(), spell()
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if want := ra.Cmp(rb) == 0; SameID(json.RawMessage(a), json.RawMessage(b)) != want {
			t.Fatalf("%s and %s: SameID %v, as rationals %v", a, b, !want, want)
		}
	}
}

// An id's cost is its length: an exponent of a million is not a million
// digits (as exact rationals, one such comparison took 40 ms).
func TestCanonicalID_HugeExponentIsCheap(t *testing.T) {
	start := time.Now()
	for i := range 1000 {
		CanonicalID(json.RawMessage(strconv.Itoa(i+1) + "e999999"))
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("1000 ids with exponent 999999 took %s", took)
	}
}
