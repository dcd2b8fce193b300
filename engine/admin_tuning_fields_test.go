package engine

import (
	"slices"
	"testing"
)

// PUT /v1/hedge decodes hedgeRequest, not HedgeUpdate: a field added to
// one and not the other would be refused as unknown, or never applied.
func TestAdminHedge_RequestTakesEveryFieldOfHedgeUpdate(t *testing.T) {
	if got, want := jsonFields(hedgeRequest{}), jsonFields(HedgeUpdate{}); !slices.Equal(got, want) {
		t.Fatalf("hedgeRequest fields %v, HedgeUpdate fields %v", got, want)
	}
}
