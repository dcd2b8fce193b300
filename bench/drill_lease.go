package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// A drill holds the instance's drill lease while it runs (POST /v1/drill,
// see engine/drill_lease.go): a second drill against the same instance is
// refused rather than injecting its fault into the first one's
// measurements. The lease is renewed every leaseRenew and expires leaseTTL
// after the last renewal, so a drill killed outright blocks the next for
// that long at most.
//
// A lease can be lost while the drill runs: the instance restarted (it
// knows no lease), or renewals failed past its expiry. Lost to a restart,
// the drill stops, no verdict (drill_restart.go). Expired and free, it is
// taken again and the drill says so in the evidence of the step it
// happened in; taken by another drill, the two would inject faults into
// each other's measurements, so the drill stops (no verdict), clearing its
// fault, and says whose drill took it.
var (
	leaseTTL   = 15 * time.Second
	leaseRenew = 5 * time.Second
)

// drillLease is the lease a running drill holds.
type drillLease struct {
	admin   *Admin
	holder  string
	started time.Time
	// instance is when the instance started (its status's started), zero
	// if unknown; a lease lost to a restart stops the drill (drill_restart.go).
	instance time.Time
	lost     context.CancelCauseFunc // stops the drill when another took the lease
	stop     context.CancelFunc
	done     sync.WaitGroup
	once     sync.Once

	mu    sync.Mutex
	id    string
	notes []string // what became of the lease, for the step's evidence
}

// ErrDrillRunning: the instance's drill lease is held by another drill.
var ErrDrillRunning = errors.New("drill: another drill is running against this instance")

// takeDrillLease takes the instance's drill lease and keeps renewing it
// until release; lost is called, with why, if another drill takes it.
func takeDrillLease(ctx context.Context, admin *Admin, mode string, lost context.CancelCauseFunc) (*drillLease, error) {
	host, _ := os.Hostname()
	who := "rpcdash drill"
	if admin.Actor == string(engine.ActorConsole) {
		who = "the console's drill"
	}
	l := &drillLease{admin: admin, holder: fmt.Sprintf("%s (%s fault, pid %d on %s)", who, mode, os.Getpid(), host),
		started: time.Now(), lost: lost}
	if _, err := l.take(ctx); err != nil {
		return nil, err
	}
	if st, err := admin.status(ctx); err == nil {
		l.instance = st.Started
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		t := time.NewTicker(leaseRenew)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				if !l.renew(rctx) {
					return
				}
			}
		}
	}()
	return l, nil
}

// take asks for the lease; refused (ErrDrillRunning), heldBy is the
// instance's words on the drill that holds it.
func (l *drillLease) take(ctx context.Context) (heldBy string, err error) {
	var got engine.DrillLease
	err = l.admin.do(ctx, http.MethodPost, "/v1/drill", map[string]string{"holder": l.holder, "ttl": leaseTTL.String()}, &got)
	var ae *engine.AdminError
	switch {
	case errors.As(err, &ae) && ae.Code == http.StatusConflict:
		return ae.Text, fmt.Errorf("%w (%s); its lease expires by itself if that drill was killed", ErrDrillRunning, ae.Text)
	case errors.As(err, &ae) && ae.Code == http.StatusNotFound:
		return "", fmt.Errorf("drill: the instance has no drill lease (POST /v1/drill): it is older than the drill")
	case err != nil:
		return "", err
	}
	l.mu.Lock()
	l.id = got.ID
	l.mu.Unlock()
	return "", nil
}

// renew extends the lease, or takes it again when the instance no longer
// knows it (404). A renewal that fails otherwise is retried at the next
// tick: the lease outlives two missed renewals. It returns false once the
// drill is stopped: another drill holds the lease, or the instance
// restarted.
func (l *drillLease) renew(ctx context.Context) bool {
	l.mu.Lock()
	id := l.id
	l.mu.Unlock()
	err := l.admin.do(ctx, http.MethodPut, "/v1/drill/"+id, map[string]string{"ttl": leaseTTL.String()}, nil)
	var ae *engine.AdminError
	if !errors.As(err, &ae) || ae.Code != http.StatusNotFound {
		return true
	}
	at := time.Since(l.started).Round(time.Millisecond)
	if restart := restartedSince(ctx, l.admin, l.instance); restart != "" {
		l.lost(&drillStopped{text: fmt.Sprintf("the drill lease was lost at +%s: %s", at, restart)})
		return false
	}
	why := fmt.Sprintf("the drill lease was lost at +%s (%s)", at, ae.Text)
	switch heldBy, err := l.take(ctx); {
	case err == nil:
		l.note(why + " and taken again: no other drill held it")
	case errors.Is(err, ErrDrillRunning):
		text := fmt.Sprintf("%s, and another drill holds it now (%s): two drills at once would inject faults into each other's measurements",
			why, heldBy)
		l.lost(&drillStopped{text: text})
		return false
	default:
		// Not taken yet (the instance does not answer): the next tick
		// tries again, a renewal first.
	}
	return true
}

func (l *drillLease) note(s string) {
	l.mu.Lock()
	l.notes = append(l.notes, s)
	l.mu.Unlock()
}

// takeNotes returns what became of the lease since the last call.
func (l *drillLease) takeNotes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.notes
	l.notes = nil
	return n
}

// release stops the renewals and lets the lease go, once.
func (l *drillLease) release() {
	l.once.Do(func() {
		l.stop()
		l.done.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l.mu.Lock()
		id := l.id
		l.mu.Unlock()
		_ = l.admin.do(ctx, http.MethodDelete, "/v1/drill/"+id, nil, nil) // else it expires; a lease another took is not ours (404)
	})
}
