package engine

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
)

// answerBudget bounds the upstream bytes one batch may hold: every
// attempt of every element draws on it while it reads, so the batch's
// memory stays near server.max_response_bytes however many elements it
// has. Bytes are not given back when a losing attempt's answer is
// dropped, which can only end a batch early, never let it grow.
type answerBudget struct {
	left atomic.Int64
	cut  context.CancelCauseFunc // ends the whole batch once overdrawn
}

type answerBudgetKey struct{}

// errBatchTooLarge is the cause of a batch cut by its answer bound.
var errBatchTooLarge = errors.New("response too large: the batch's answers exceed server.max_response_bytes")

func withAnswerBudget(ctx context.Context, limit int64, cut context.CancelCauseFunc) context.Context {
	b := &answerBudget{cut: cut}
	b.left.Store(limit)
	return context.WithValue(ctx, answerBudgetKey{}, b)
}

// withoutAnswerBudget is ctx with no answer budget: what is read under it
// is charged by whoever takes it (an upstream batch's answer, charged once
// its race took it).
func withoutAnswerBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, answerBudgetKey{}, (*answerBudget)(nil))
}

func budgetOf(ctx context.Context) *answerBudget {
	b, _ := ctx.Value(answerBudgetKey{}).(*answerBudget)
	return b
}

// reader charges what r yields to the budget and fails once it is spent.
func (b *answerBudget) reader(r io.Reader) io.Reader { return &budgetReader{r: r, b: b} }

type budgetReader struct {
	r io.Reader
	b *answerBudget
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if br.b.left.Load() < 0 {
		return 0, errBatchTooLarge
	}
	n, err := br.r.Read(p)
	if br.b.left.Add(-int64(n)) < 0 {
		br.b.cut(errBatchTooLarge)
		return n, errBatchTooLarge
	}
	return n, err
}

// giveBack returns bytes read for answers that were dropped and are read
// again (an upstream batch that failed, whose calls then run alone), so
// that a batch is not cut for bytes it reads twice. Bytes already over
// the bound stay spent: the batch was cut.
func (b *answerBudget) giveBack(n int64) {
	if b.left.Load() >= 0 {
		b.left.Add(n)
	}
}

// charge draws n bytes read apart from the budget (an upstream batch's
// winning answer), and cuts the batch once it is overdrawn: false then.
func (b *answerBudget) charge(n int64) bool {
	if b.left.Add(-n) < 0 {
		b.cut(errBatchTooLarge)
		return false
	}
	return true
}
