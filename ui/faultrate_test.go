package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// A fault injected through the admin API on 2.5% of requests read "on 2%
// of requests" in the detail (a rate rounded to a whole percent, half to
// even): the share in force is said as the other shares are.
func TestDetail_AFaultsRateIsNotRounded(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[0].Fault = &engine.FaultInfo{Mode: engine.FaultError, Rate: 0.025, Since: s.Time}
	d := strings.Join(fixedModel(s, themes.Default(), 120, 36).detailLines(100), "\n")
	if !strings.Contains(d, "error on 2.5% of requests") {
		t.Errorf("detail:\n%s", d)
	}
}
