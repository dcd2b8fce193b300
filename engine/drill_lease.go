package engine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A drill injects a fault and judges the instance by what follows; two at
// once would inject faults into each other's measurements. The drill
// lease lets one drill run at a time: a drill takes it (POST /v1/drill),
// renews it while it runs (PUT /v1/drill/{id}) and lets it go at its end
// (DELETE). It expires by itself, so that a drill killed outright (SIGKILL,
// a crash), which can neither renew nor let go, blocks the next one only
// until its lease runs out.

// drillLeaseMaxTTL bounds a lease's span: a drill renews it well within.
const drillLeaseMaxTTL = 5 * time.Minute

// DrillLease is the drill lease in force.
type DrillLease struct {
	ID      string    `json:"id"`
	Holder  string    `json:"holder"` // who holds it, in the holder's words
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
}

// errDrillRunning: another drill holds the lease (an HTTP 409).
var errDrillRunning = errors.New("a drill is running")

// errNoDrillLease: the lease named is not the one in force (released,
// expired, or taken by another drill since).
var errNoDrillLease = errors.New("no such drill lease")

type drillLeases struct {
	mu  sync.Mutex
	cur DrillLease // zero ID: none
}

// AcquireDrill takes the drill lease for holder, for ttl, unless another
// drill holds one that has not expired.
func (e *Engine) AcquireDrill(holder string, ttl time.Duration) (DrillLease, error) {
	now := e.now()
	l := &e.drills
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.cur; c.ID != "" && now.Before(c.Expires) {
		return DrillLease{}, fmt.Errorf("%w: %s, since %s; its lease ends at %s (in %s) unless it renews it",
			errDrillRunning, c.Holder, c.Since.Format("15:04:05"), c.Expires.Format("15:04:05"), c.Expires.Sub(now).Round(time.Second))
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	l.cur = DrillLease{ID: hex.EncodeToString(id[:]), Holder: holder, Since: now, Expires: now.Add(ttl)}
	return l.cur, nil
}

// RenewDrill extends the lease id for ttl from now, if it is still the
// one in force.
func (e *Engine) RenewDrill(id string, ttl time.Duration) (DrillLease, error) {
	now := e.now()
	l := &e.drills
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur.ID == "" || l.cur.ID != id || !now.Before(l.cur.Expires) {
		return DrillLease{}, fmt.Errorf("%w: it was released or expired", errNoDrillLease)
	}
	l.cur.Expires = now.Add(ttl)
	return l.cur, nil
}

// ReleaseDrill lets the lease id go, if it is the one in force.
func (e *Engine) ReleaseDrill(id string) error {
	l := &e.drills
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur.ID == "" || l.cur.ID != id {
		return fmt.Errorf("%w: it was released, or expired and taken by another drill", errNoDrillLease)
	}
	l.cur = DrillLease{}
	return nil
}

// RunningDrill is GET /v1/drill: the drill whose lease is in force, or
// none. The lease's id is left out: it is its holder's, to renew or let go.
type RunningDrill struct {
	Running bool      `json:"running"`
	Holder  string    `json:"holder,omitempty"`
	Since   time.Time `json:"since,omitzero"`
	Expires time.Time `json:"expires,omitzero"`
}

// currentDrill is the drill running now: the lease in force, unless it
// has expired.
func (e *Engine) currentDrill() RunningDrill {
	now := e.now()
	l := &e.drills
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.cur; c.ID != "" && now.Before(c.Expires) {
		return RunningDrill{Running: true, Holder: c.Holder, Since: c.Since, Expires: c.Expires}
	}
	return RunningDrill{}
}
