package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// t on the endpoints said "t: choose a method row in the methods panel
// first", an error kept 30 s; choosing one and pressing t opened the view
// with that line still under it, telling the operator to do what was done.
func TestTuning_OpeningTheViewClearsTheAdviceToChooseARow(t *testing.T) {
	m := pressKeys(fixedModel(healthySnapshot(), themes.Default(), 120, 36), "t")
	if !strings.Contains(m.statusLineView(), "choose a method row") {
		t.Fatalf("t on the endpoints: status %q", m.statusLineView())
	}
	m = pressKeys(m, "tab", "j", "t")
	if m.overlay != overlayTuning {
		t.Fatalf("tab j t: overlay %v", m.overlay)
	}
	if v := m.View(); strings.Contains(v, "choose a method row") {
		t.Errorf("the view opened under the advice to choose a row:\n%s", v)
	}
}
