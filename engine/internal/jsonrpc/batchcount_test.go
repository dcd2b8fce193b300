package jsonrpc

import (
	"strings"
	"testing"
)

// The streaming count agrees with ParseBodyLimit's: strings, escapes and
// nested values are one element each, whatever brackets and commas they
// hold; a body that is not a batch is not counted; and it holds however the
// bytes are cut.
func TestBatchCounter_CountsElementsAsBytesArrive(t *testing.T) {
	el := `{"jsonrpc":"2.0","id":"a,]\"[,","method":"eth_call","params":[{"data":"0x,[]{}"},["x","y"],"latest"]}`
	for _, c := range []struct {
		name string
		body string
		max  int
		over bool
	}{
		{"at the limit", "[" + strings.Repeat(el+",", 2) + el + "]", 3, false},
		{"one over", "[" + strings.Repeat(el+",", 3) + el + "]", 3, true},
		{"spaces", " \n[ 1 , 2 ,\t3 ] ", 3, false},
		{"spaces, one over", " \n[ 1 , 2 ,\t3 , 4] ", 3, true},
		{"nested arrays are one element", "[[1,2,3,4,5],[6,7,8,9]]", 2, false},
		{"escaped backslash ends the string", `["\\",1,2]`, 3, false},
		{"escaped backslash, one over", `["\\",1,2,3]`, 3, true},
		{"not a batch", `{"a":[1,2,3,4,5,6]}`, 1, false},
		{"empty batch", `[]`, 1, false},
		{"after the batch closed", `[1] [2,3,4]`, 1, false},
		{"no limit", `[1,2,3]`, 0, false},
	} {
		for _, cut := range []int{1, 2, 7, len(c.body)} {
			bc := NewBatchCounter(c.max)
			over := false
			for i := 0; i < len(c.body) && !over; i += cut {
				over = bc.Write([]byte(c.body[i:min(i+cut, len(c.body))]))
			}
			if over != c.over {
				t.Errorf("%s, in pieces of %d bytes: over %v, want %v", c.name, cut, over, c.over)
			}
			if _, perr := ParseBodyLimit([]byte(c.body), c.max); c.over && (perr == nil || perr.Code != CodeLimitExceeded) {
				t.Errorf("%s: ParseBodyLimit says %+v, the counter says over", c.name, perr)
			}
		}
	}
}
