package engine

// Actor is who did a control action: an operator at the console, a caller
// of the admin API, or the engine on its own (a fault's duration ran out).
type Actor string

const (
	ActorConsole Actor = "console"
	ActorAdmin   Actor = "admin"
	ActorEngine  Actor = "engine"
)

// headerActor lets an admin API caller say it is the console (an attached
// one); anything else is "admin".
const headerActor = "X-Rpcdash-Actor"
