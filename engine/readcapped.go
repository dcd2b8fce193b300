package engine

import (
	"errors"
	"io"
)

// errOverLimit: readCapped read more than its limit.
var errOverLimit = errors.New("over the limit")

// readCapped appends what r yields to dst until EOF. It refuses, with
// errOverLimit, to hold more than limit bytes, and grows dst by doubling
// but never past limit or, while the data is within it, past hint+1:
// the size the sender announced. A body of n bytes so costs at most about
// 1.5 n at its peak (the last copy), not 3 n as plain doubling can, and an
// announced size reserves nothing that has not arrived.
func readCapped(dst []byte, r io.Reader, hint, limit int64) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			n := int64(len(dst))
			if n >= limit {
				// Full at the limit: one byte more says the body is over
				// it. Growing to limit+1 for that byte copied it all: a
				// 32 MiB limit, which doubling reaches exactly, cost
				// 64 MiB for every answer cut.
				return dst, overLimit(r)
			}
			next := max(2*n, 512)
			if hint > n {
				next = min(next, hint+1)
			}
			next = min(next, limit)
			grown := make([]byte, n, next)
			copy(grown, dst)
			dst = grown
		}
		k, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+k]
		if int64(len(dst)) > limit {
			return dst, errOverLimit
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// overLimit reads on from a body that has filled its limit: errOverLimit
// if any byte comes, nil at its end.
func overLimit(r io.Reader) error {
	var one [1]byte
	for {
		k, err := r.Read(one[:])
		switch {
		case k > 0:
			return errOverLimit
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
}
