package engine

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// oneByteReader yields one byte per Read, the worst case for growth.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

func TestReadCapped_GrowsNoFurtherThanTheHintAndTheLimit(t *testing.T) {
	data := strings.Repeat("x", 100_000)
	for _, c := range []struct {
		name        string
		hint, limit int64
		wantErr     error
		maxCap      int
	}{
		{"announced length", 100_000, 1 << 20, nil, 100_001},
		{"unknown length", -1, 1 << 20, nil, 131_072},
		{"length understated", 10, 1 << 20, nil, 131_072},
		{"length overstated", 5 << 20, 1 << 20, nil, 131_072},
		{"over the limit", -1, 50_000, errOverLimit, 50_001},
		{"announced over the limit", 100_000, 50_000, errOverLimit, 50_001},
	} {
		got, err := readCapped(nil, oneByteReader{strings.NewReader(data)}, c.hint, c.limit)
		if !errors.Is(err, c.wantErr) && err != c.wantErr {
			t.Errorf("%s: error %v, want %v", c.name, err, c.wantErr)
		}
		if c.wantErr == nil && !bytes.Equal(got, []byte(data)) {
			t.Errorf("%s: read %d bytes, want %d", c.name, len(got), len(data))
		}
		if cap(got) > c.maxCap {
			t.Errorf("%s: grew to %d bytes, want at most %d", c.name, cap(got), c.maxCap)
		}
	}
}

// The limit is exact: limit bytes are read, one more is refused, also when
// the reader hands over the last bytes together with io.EOF (as a body
// whose end arrives in the same read often is).
func TestReadCapped_TheLimitIsExactEvenWhenTheLastReadBringsEOF(t *testing.T) {
	const limit = 1000
	for _, c := range []struct {
		size    int
		wantErr error
	}{{limit, nil}, {limit + 1, errOverLimit}} {
		for _, hint := range []int64{-1, int64(c.size)} {
			data := strings.Repeat("x", c.size)
			got, err := readCapped(nil, iotest.DataErrReader(strings.NewReader(data)), hint, limit)
			if err != c.wantErr {
				t.Errorf("%d bytes (announced %d) under a limit of %d: error %v after %d bytes, want %v", c.size, hint, limit, err, len(got), c.wantErr)
			}
		}
	}
}

// The default server.max_response_bytes, 32 MiB, is a power of two, which
// doubling reaches exactly: an answer over it filled 32 MiB, then was
// copied whole into 32 MiB + 1 for the one byte that said it was over,
// 64 MiB held at once for every answer cut (four 200 MB answers at once
// took rpcdash's RSS from 16 to 271 MB). The byte past the limit is read
// on its own: nothing is held past the limit.
func TestReadCapped_AnswerOverAPowerOfTwoLimitHoldsNoMoreThanTheLimit(t *testing.T) {
	const limit = 1 << 16
	data := strings.Repeat("x", limit+10)
	for _, hint := range []int64{-1, limit + 10} {
		got, err := readCapped(nil, oneByteReader{strings.NewReader(data)}, hint, limit)
		if !errors.Is(err, errOverLimit) {
			t.Fatalf("hint %d: error %v, want errOverLimit", hint, err)
		}
		if cap(got) > limit {
			t.Errorf("hint %d: grew to %d bytes to learn it was over %d", hint, cap(got), limit)
		}
	}
	// Exactly the limit is within it.
	got, err := readCapped(nil, oneByteReader{strings.NewReader(data[:limit])}, -1, limit)
	if err != nil || len(got) != limit || cap(got) != limit {
		t.Errorf("a body of exactly the limit: %d bytes (cap %d), %v", len(got), cap(got), err)
	}
}
