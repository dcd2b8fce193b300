package ui

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A real engine over simulated upstreams on loopback, and the two
// backends the console can use over it.

type rig struct {
	eng  *engine.Engine
	sims []*sim.Upstream
}

func newRig(t testing.TB, names ...string) *rig {
	t.Helper()
	return newRigWith(t, sim.Latency{Median: 2 * time.Millisecond}, names...)
}

// newRigWith is newRig with every sim answering after lat.
func newRigWith(t testing.TB, lat sim.Latency, names ...string) *rig {
	t.Helper()
	r := &rig{}
	cfg := engine.Default()
	cfg.Server.Listen, cfg.Server.Admin = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Hedge.Enabled = true
	for i, n := range names {
		u := sim.New(sim.Config{Name: n, Seed: int64(i + 1), Latency: lat})
		if err := u.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { u.Close() })
		r.sims = append(r.sims, u)
		cfg.Endpoints = append(cfg.Endpoints, engine.EndpointConfig{Name: n, URL: u.URL(), Provider: "p" + n, Region: "r"})
	}
	eng, err := engine.New(cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	r.eng = eng
	return r
}

// backends are the console's two ways to the rig's engine.
func (r *rig) backends(t testing.TB) map[string]Backend {
	remote, err := NewRemote("http://"+r.eng.AdminAddr(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remote.Close)
	return map[string]Backend{"in-process": Local{Engine: r.eng}, "attached": remote}
}

// spy records every call a console makes, then passes it on.
type spy struct {
	Backend
	mu    sync.Mutex
	calls []string
}

func (s *spy) record(c string) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

func (s *spy) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

func (s *spy) Drain(ctx context.Context, n string) error {
	s.record("Drain " + n)
	return s.Backend.Drain(ctx, n)
}

func (s *spy) Undrain(ctx context.Context, n string) error {
	s.record("Undrain " + n)
	return s.Backend.Undrain(ctx, n)
}

func (s *spy) InjectFault(ctx context.Context, n string, f engine.FaultSpec) error {
	s.record(fmt.Sprintf("InjectFault %s %s rate=%g latency=%s duration=%s", n, f.Mode, f.Rate, f.Latency.D(), f.Duration.D()))
	return s.Backend.InjectFault(ctx, n, f)
}

func (s *spy) ClearFault(ctx context.Context, n string) error {
	s.record("ClearFault " + n)
	return s.Backend.ClearFault(ctx, n)
}

func (s *spy) SetRole(ctx context.Context, n, role string, share *float64, force bool) error {
	c := "SetRole " + n + " " + role
	if share != nil {
		c += fmt.Sprintf(" share=%g", *share)
	}
	if force {
		c += " force"
	}
	s.record(c)
	return s.Backend.SetRole(ctx, n, role, share, force)
}

func (s *spy) SetHedge(ctx context.Context, u engine.HedgeUpdate) error {
	c := "SetHedge"
	if u.Enabled != nil {
		c += fmt.Sprintf(" enabled=%v", *u.Enabled)
	}
	if u.Delay != nil {
		c += " delay=" + *u.Delay
	}
	if u.Method != "" {
		c += " method=" + u.Method
	}
	if u.Quantile != nil {
		c += fmt.Sprintf(" quantile=%g", *u.Quantile)
	}
	if u.AllMethods {
		c += " all"
	}
	s.record(c)
	return s.Backend.SetHedge(ctx, u)
}

// console is a model over be at w×h after its first refresh.
func console(t testing.TB, be Backend, w, h int, readonly bool) Model {
	t.Helper()
	m := New(Options{Backend: be, ReadOnly: readonly, Location: time.UTC})
	mm, _ := m.Update(sizeMsg(w, h))
	return refreshed(t, mm.(Model))
}

// refreshed runs one refresh the way a tick does.
func refreshed(t testing.TB, m Model) Model {
	t.Helper()
	cmd := m.refresh()
	if cmd == nil {
		t.Fatal("no refresh started")
	}
	return settle(t, m, cmd)
}

// settle runs the commands a message chain produces (control calls and
// the refreshes after them, a batch's commands one after another) until
// none is left. Ticks are not produced on these paths, so nothing here
// waits on a timer.
func settle(t testing.TB, m Model, cmd tea.Cmd) Model {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.QuitMsg:
			return m
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			mm, next := m.Update(msg)
			m = mm.(Model)
			queue = append(queue, next)
		}
	}
	return m
}

// press sends keys one by one, settling each.
func press(t testing.TB, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		mm, cmd := m.Update(keyMsg(k))
		m = settle(t, mm.(Model), cmd)
	}
	return m
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// read sends n reads through the rig's port so methods show up.
func (r *rig) read(t testing.TB, n int, method string) {
	t.Helper()
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":[]}`, i, method)
		if method == "eth_getBalance" {
			body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`, i)
		}
		postRPC(t, "http://"+r.eng.RPCAddr(), body)
	}
}
