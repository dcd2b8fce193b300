package ui

import "github.com/charmbracelet/bubbles/key"

// keyMap is every binding of the console, declared once. Bindings that
// change the engine are listed in mutating(): --readonly disables them, and
// the help says so.
type keyMap struct {
	Up, Down, Top, Tab, ShiftTab key.Binding
	Enter                        key.Binding
	Drain, Fault, Clear, Role    key.Binding
	Hedging, DelayUp, DelayDown  key.Binding
	Auto, Exact, Tune            key.Binding
	Drill, Abort, Apply          key.Binding
	Freeze, Filter, Help, Quit   key.Binding
	Yes, No, Esc                 key.Binding
	// Leave is esc and q in the tuning view's help bar: q closes the
	// view there, it does not quit.
	Leave key.Binding
	// Menu keys (fault and role menus): left/right change the field's value.
	Left, Right key.Binding
}

func newKeyMap(readonly bool) keyMap {
	k := keyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Top:       key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "top (newest events)")),
		Tab:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next panel")),
		ShiftTab:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous panel")),
		Enter:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "endpoint detail")),
		Drain:     key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "drain/undrain endpoint")),
		Fault:     key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "fault menu")),
		Clear:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "clear fault")),
		Role:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "role menu (cutover)")),
		Hedging:   key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "hedging on/off")),
		DelayUp:   key.NewBinding(key.WithKeys("+"), key.WithHelp("+", "hedge delay up")),
		DelayDown: key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "hedge delay down")),
		Auto:      key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "delay back to auto")),
		Exact:     key.NewBinding(key.WithKeys("="), key.WithHelp("=", "exact delay")),
		Tune:      key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "tune the method's hedging")),
		Drill:     key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "failover drill")),
		Abort:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "abort the drill")),
		Apply:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply the row (asks)")),
		Freeze:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "freeze/unfreeze")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter events")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Yes:       key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:        key.NewBinding(key.WithKeys("n", "N"), key.WithHelp("n", "no")),
		Esc:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
		Leave:     key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc/q", "leave")),
		Left:      key.NewBinding(key.WithKeys("left"), key.WithHelp("←/→", "change")),
		Right:     key.NewBinding(key.WithKeys("right"), key.WithHelp("←/→", "change")),
	}
	if readonly {
		for _, b := range k.mutating() {
			b.SetEnabled(false)
		}
		// enter applies only in the tuning view (elsewhere it opens the
		// detail, so it is not in mutating): off there too.
		k.Apply.SetEnabled(false)
	}
	return k
}

// mutating are the bindings that change the engine (k9s's "dangerous").
func (k *keyMap) mutating() []*key.Binding {
	return []*key.Binding{&k.Drain, &k.Fault, &k.Clear, &k.Role, &k.Hedging, &k.DelayUp, &k.DelayDown, &k.Auto, &k.Exact, &k.Drill}
}

// ShortHelp is the help bar.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Tab, k.Enter, k.Drain, k.Fault, k.Hedging, k.DelayUp, k.DelayDown, k.Auto, k.Tune, k.Role, k.Freeze, k.Help, k.Quit}
}

// TuningHelp is the help bar of the tuning view.
func (k keyMap) TuningHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Apply, k.Auto, k.Leave}
}

// FullHelp is the help screen, one column per group.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Top, k.Tab, k.ShiftTab, k.Enter},
		{k.Drain, k.Fault, k.Clear, k.Role, k.Hedging, k.Drill},
		{k.DelayUp, k.DelayDown, k.Auto, k.Exact, k.Tune, k.Esc},
		{k.Freeze, k.Filter, k.Yes, k.No, k.Help, k.Quit},
	}
}
