package engine

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as "150ms", for
// the admin API and Snapshot. A bare number is refused, 0 aside: read as
// nanoseconds, {"duration":5} meant for seconds injected a 5 ns fault
// that was gone before it was seen, while the call said it succeeded.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("not a duration: %q", s)
		}
		*d = Duration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("not a duration: %.40s", b)
	}
	if n != 0 {
		return fmt.Errorf("a bare number (%.40s) is not a duration: give its unit, as in \"%gs\" or \"%gms\"", b, n, n)
	}
	*d = 0
	return nil
}

func (d Duration) D() time.Duration { return time.Duration(d) }

// roundShown rounds a duration for a message: to a tenth of a second from
// a second up ("2m35.9s", not "2m35.862s"), to a millisecond from 10 ms.
func roundShown(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}
