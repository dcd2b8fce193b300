package engine

// sentIntoEndedFault says whether a was sent while an injected fault,
// since cleared (or expired), was in force on its endpoint: its failure is
// the fault's, and gives its breaker no verdict. A half-open trial probe
// sent into an unreachable fault timed out 2.6 s after the operator had
// cleared the fault, and reopened the healthy endpoint's breaker with
// its cooldown doubled, to 2m40s. While the fault is in force, its
// failures count, so that a drill sees the breaker open; the opens and
// failed trials it caused are forgiven when it ends (faultEnded).
func (a *attempt) sentIntoEndedFault() bool {
	start := a.start.UnixNano()
	return start >= a.ep.faultFrom.Load() && start < a.ep.faultTo.Load()
}
