package sim

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// StartSet starts one upstream per config on host:0. On error it closes the
// ones already started and returns none.
func StartSet(cfgs []Config, host string) ([]*Upstream, error) {
	return StartSetAt(cfgs, host, 0)
}

// StartSetAt is StartSet on the ports from firstPort up, one each in
// order (0: ports the system picks), so that a config can name them.
func StartSetAt(cfgs []Config, host string, firstPort int) ([]*Upstream, error) {
	ups := make([]*Upstream, 0, len(cfgs))
	for i, cfg := range cfgs {
		u := New(cfg)
		port := 0
		if firstPort > 0 {
			port = firstPort + i
		}
		if err := u.Start(net.JoinHostPort(host, strconv.Itoa(port))); err != nil {
			return nil, errors.Join(fmt.Errorf("sim: start upstream %d (%s): %w", i, cfg.Name, err), CloseAll(ups))
		}
		ups = append(ups, u)
	}
	return ups, nil
}

// CloseAll closes every upstream and joins their errors.
func CloseAll(ups []*Upstream) error {
	var errs []error
	for _, u := range ups {
		errs = append(errs, u.Close())
	}
	return errors.Join(errs...)
}
