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
var (
	leaseTTL   = 15 * time.Second
	leaseRenew = 5 * time.Second
)

// drillLease is the lease a running drill holds.
type drillLease struct {
	admin *Admin
	id    string
	stop  context.CancelFunc
	done  sync.WaitGroup
}

// ErrDrillRunning: the instance's drill lease is held by another drill.
var ErrDrillRunning = errors.New("drill: another drill is running against this instance")

// takeDrillLease takes the instance's drill lease and keeps renewing it
// until release.
func takeDrillLease(ctx context.Context, admin *Admin, mode string) (*drillLease, error) {
	host, _ := os.Hostname()
	who := "rpcdash drill"
	if admin.Actor == string(engine.ActorConsole) {
		who = "the console's drill"
	}
	holder := fmt.Sprintf("%s (%s fault, pid %d on %s)", who, mode, os.Getpid(), host)
	var got engine.DrillLease
	err := admin.do(ctx, http.MethodPost, "/v1/drill", map[string]string{"holder": holder, "ttl": leaseTTL.String()}, &got)
	var ae *engine.AdminError
	switch {
	case errors.As(err, &ae) && ae.Code == http.StatusConflict:
		return nil, fmt.Errorf("%w (%s); its lease expires by itself if that drill was killed", ErrDrillRunning, ae.Text)
	case errors.As(err, &ae) && ae.Code == http.StatusNotFound:
		return nil, fmt.Errorf("drill: the instance has no drill lease (POST /v1/drill): it is older than the drill")
	case err != nil:
		return nil, err
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l := &drillLease{admin: admin, id: got.ID, stop: stop}
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
				// A renewal that fails is retried at the next tick: the lease
				// outlives two missed renewals.
				_ = admin.do(rctx, http.MethodPut, "/v1/drill/"+l.id, map[string]string{"ttl": leaseTTL.String()}, nil)
			}
		}
	}()
	return l, nil
}

// release stops the renewals and lets the lease go.
func (l *drillLease) release() {
	l.stop()
	l.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.admin.do(ctx, http.MethodDelete, "/v1/drill/"+l.id, nil, nil) // else it expires
}
