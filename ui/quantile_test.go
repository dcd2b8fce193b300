package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// hedge.quantile set to 0.999 read "hedging on auto p100" in the header
// and "auto p100" on the (all methods) row, 0.975 "p98": the auto delay's
// quantile rounded to a whole percentile, the one it is not. Seen live
// after PUT /v1/hedge {"quantile":0.999}.
func TestView_TheAutoQuantileIsNotRounded(t *testing.T) {
	for q, want := range map[float64]string{0.999: "p99.9", 0.975: "p97.5", 0.95: "p95", 0.9995: "p99.95"} {
		s := healthySnapshot()
		s.Hedge.Quantile = q
		for _, size := range [][2]int{{80, 24}, {120, 36}} {
			m := fixedModel(s, themes.Default(), size[0], size[1])
			head := strings.Join(m.headerLines(), "\n")
			if !strings.Contains(head, "auto "+want+" ") {
				t.Errorf("%v quantile %g: the header does not say %s:\n%s", size, q, want, head)
			}
			if row := lineWith(m.View(), "(all methods)"); !strings.Contains(row, "auto "+want+" ") {
				t.Errorf("%v quantile %g: the all-methods row does not say %s:\n%s", size, q, want, row)
			}
		}
	}
}
