package engine

import "github.com/rpcdash/rpcdash/engine/internal/window"

// WindowDistribution is distributionOf for the external tests, which fill
// windows themselves.
func WindowDistribution(w *window.Latency) Distribution { return distributionOf(w) }
