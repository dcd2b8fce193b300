package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Two endpoints whose names differ only past their 15th character
// (steady-with-a-very-long-name and the same with -6) read
// "steady-with-a-v…" both, in the endpoint table and the events: which
// row was which could not be told. A name too long for its 16 cells is
// cut in its middle and keeps its end.
func TestView_LongNamesCutStayApart(t *testing.T) {
	s := healthySnapshot()
	a, b := "prod-eth-mainnet-alchemy-primary", "prod-eth-mainnet-alchemy-backup"
	s.Endpoints[0].Name, s.Endpoints[1].Name = a, b
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(s, themes.Default(), size[0], size[1])
		m.onSnapshot(snapshotMsg{snap: s, events: []engine.Event{
			{Seq: 10, Time: t0, Type: engine.EventDrain, Endpoint: a, Actor: engine.ActorConsole, Message: "drained"},
			{Seq: 11, Time: t0, Type: engine.EventFault, Endpoint: b, Actor: engine.ActorConsole, Message: "fault injected"},
		}})
		v := m.View()
		rowA, rowB := lineWith(v, "● closed"), ""
		for _, l := range strings.Split(v, "\n") {
			if strings.Contains(l, "● closed") && l != rowA {
				rowB = l
				break
			}
		}
		cellA, cellB := nameCell(rowA), nameCell(rowB)
		if cellA == cellB || !strings.HasSuffix(cellA, "primary") || !strings.HasSuffix(cellB, "-backup") {
			t.Errorf("%d×%d: the two names read %q and %q:\n%s", size[0], size[1], cellA, cellB, v)
		}
		if evA, evB := lineWith(v, "drained"), lineWith(v, "fault injected"); !strings.Contains(evA, "…primary") || !strings.Contains(evB, "…-backup") {
			t.Errorf("%d×%d: the events name them:\n%s\n%s", size[0], size[1], evA, evB)
		}
	}
}

// nameCell is the endpoint name in an endpoint table row.
func nameCell(row string) string {
	f := strings.Fields(strings.Trim(row, "│ ▸"))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// The status line said "endpoint keys act on " and the name, cut at the
// line's end at 80 columns: the endpoint the keys act on read as the
// other one, and the method the delay keys act on was not said.
func TestStatusLine_ALongNameLeavesBothTargetsInSight(t *testing.T) {
	s := healthySnapshot()
	long := "steady-with-a-very-long-endpoint-name-for-testing-truncation"
	s.Endpoints[0].Name, s.Endpoints[1].Name = long, long+"-6"
	m := pressKeys(fixedModel(s, themes.Default(), 80, 24), "j")
	line := m.statusLineView()
	if !strings.Contains(line, "endpoint keys act on steady") || !strings.Contains(line, "ation-6, delay keys on all methods") {
		t.Errorf("status line %q", line)
	}
}

// Methods of the EVM table longer than the METHOD column's 26 cells read
// the same in pairs: eth_getBlockTransactionCountByNumber and …ByHash both
// "eth_getBlockTransactionCo…" (seen live at 120x40). Cut in the middle,
// each keeps its end.
func TestView_LongMethodNamesCutStayApart(t *testing.T) {
	s := healthySnapshot()
	pairs := [][2]string{
		{"eth_getBlockTransactionCountByNumber", "eth_getBlockTransactionCountByHash"},
		{"eth_getTransactionByBlockNumberAndIndex", "eth_getTransactionByBlockHashAndIndex"},
	}
	for _, p := range pairs {
		for _, name := range p {
			s.Methods[name] = method(engine.ClassRead, 1, 40*time.Millisecond, 90*time.Millisecond, 160*time.Millisecond, 88*time.Millisecond, "auto")
		}
	}
	v := fixedModel(s, themes.Default(), 120, 40).View()
	cells := map[string]bool{}
	for _, l := range strings.Split(v, "\n") {
		if f := strings.Fields(strings.Trim(l, "│ ▸")); len(f) > 1 && f[1] == "read" {
			if cells[f[0]] {
				t.Errorf("two method rows read %q:\n%s", f[0], v)
			}
			cells[f[0]] = true
		}
	}
	if len(cells) < 4 {
		t.Fatalf("%d method rows found:\n%s", len(cells), v)
	}
}
