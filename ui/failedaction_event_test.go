package ui

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// A control call that failed (the attached instance unreachable) was
// logged with no endpoint: filtering the events by that endpoint ("/"
// tail) hid the operator's own failed undrain of tail.
func TestEvents_AFailedActionIsFiledUnderItsEndpoint(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 120, 36)
	name := m.snap.Endpoints[1].Name
	mm, _ := m.Update(actionDoneMsg{act: action{kind: actUndrain, endpoint: name, desc: "undrain " + name},
		err: errors.New("http://127.0.0.1:8546 unreachable: connection refused")})
	m = mm.(Model)
	m.evFilter = name
	evs := m.filteredEvents()
	if len(evs) == 0 || !strings.Contains(evs[0].Message, "failed: undrain "+name) {
		t.Fatalf("filter %q shows %+v", name, evs)
	}
	if !strings.Contains(lineWith(m.View(), "failed: undrain"), name) {
		t.Fatalf("the failed undrain's line names no endpoint:\n%s", m.View())
	}
}
