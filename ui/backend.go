package ui

import (
	"context"

	"github.com/rpcdash/rpcdash/engine"
)

// Backend is everything the console reads and does: the engine in this
// process, or one reached over its admin API. Calls may block (Remote),
// so the model makes them only from commands.
type Backend interface {
	Snapshot(ctx context.Context) (engine.Snapshot, error)
	// Events returns the events with sequence numbers above after.
	Events(ctx context.Context, after uint64) ([]engine.Event, error)
	Drain(ctx context.Context, endpoint string) error
	Undrain(ctx context.Context, endpoint string) error
	InjectFault(ctx context.Context, endpoint string, spec engine.FaultSpec) error
	ClearFault(ctx context.Context, endpoint string) error
	SetHedge(ctx context.Context, u engine.HedgeUpdate) error
	// SetRole changes an endpoint's role (share nil: the role's default).
	// A promotion the endpoint's evidence says fails is refused
	// (engine.IsPromotionRefused) unless force.
	SetRole(ctx context.Context, endpoint, role string, share *float64, force bool) error
	// Distribution is a hedgeable method's primary-latency distribution,
	// where its hedges go and its hedging now (the tuning view).
	Distribution(ctx context.Context, method string) (engine.MethodDistribution, error)
	// Forecast is the hedging model's prediction for each delay (a
	// duration, "auto", "auto:Q" or "current"), in order.
	Forecast(ctx context.Context, method string, delays []string) (engine.ForecastReport, error)
}

// Local is the engine running in this process; every action is the
// console's.
type Local struct{ Engine *engine.Engine }

func (l Local) Snapshot(context.Context) (engine.Snapshot, error) { return l.Engine.Snapshot(), nil }

func (l Local) Events(_ context.Context, after uint64) ([]engine.Event, error) {
	return l.Engine.Events(after), nil
}

func (l Local) Drain(_ context.Context, name string) error {
	return l.Engine.Drain(engine.ActorConsole, name)
}

func (l Local) Undrain(_ context.Context, name string) error {
	return l.Engine.Undrain(engine.ActorConsole, name)
}

func (l Local) InjectFault(_ context.Context, name string, spec engine.FaultSpec) error {
	return l.Engine.InjectFault(engine.ActorConsole, name, spec)
}

func (l Local) ClearFault(_ context.Context, name string) error {
	return l.Engine.ClearFault(engine.ActorConsole, name)
}

func (l Local) SetHedge(_ context.Context, u engine.HedgeUpdate) error {
	return l.Engine.SetHedge(engine.ActorConsole, u)
}

func (l Local) SetRole(_ context.Context, name, role string, share *float64, force bool) error {
	set := l.Engine.SetRole
	if force {
		set = l.Engine.ForceRole
	}
	_, err := set(engine.ActorConsole, name, role, share)
	return err
}

func (l Local) Distribution(_ context.Context, method string) (engine.MethodDistribution, error) {
	return l.Engine.MethodDistribution(method)
}

func (l Local) Forecast(_ context.Context, method string, delays []string) (engine.ForecastReport, error) {
	return l.Engine.HedgeForecast(method, delays)
}
