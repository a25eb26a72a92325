package problem_test

import (
	"testing"

	"exactlyonce/idem"
	"exactlyonce/internal/problem"
)

// The shop's row for each of the kit's refusals is the kit's own (its type,
// title and status, as idem.RefusalOf answers), or one of the shop's rows
// it chose for the few it answers otherwise: nothing is restated, so
// nothing can drift.
func TestKitRefusalsAreAnsweredByTheKitsRow(t *testing.T) {
	otherwise := map[error]problem.Kind{
		idem.ErrNotCommitted: problem.Unavailable,
		idem.ErrNoResponse:   problem.Internal,
		idem.ErrBodyTooLarge: problem.InvalidRequest,
		idem.ErrNotFound:     problem.Internal,
	}
	for _, err := range []error{idem.ErrMissingKey, idem.ErrBadKey, idem.ErrFormKeyMissing, idem.ErrFormKeyForeign,
		idem.ErrFormKeyExpired, idem.ErrMismatch, idem.ErrInProgress, &idem.InProgressError{}, idem.ErrLockLost,
		idem.ErrIncompleteBody, idem.ErrUnavailable, idem.ErrNotCommitted, idem.ErrNoResponse, idem.ErrBodyTooLarge, idem.ErrNotFound} {
		r, ok := idem.RefusalOf(err)
		if !ok {
			t.Fatalf("%v: the kit has no refusal for it", err)
		}
		got := problem.OfKit(r)
		if want, ok := otherwise[err]; ok {
			if got != want {
				t.Errorf("%v: got row %s, want the shop's %s", err, got.Slug, want.Slug)
			}
			continue
		}
		if got.Slug != r.Slug || got.Title != r.Title || got.Status != r.Status {
			t.Errorf("%v: got %s %q %d, want the kit's %s %q %d", err, got.Slug, got.Title, got.Status, r.Slug, r.Title, r.Status)
		}
		if got.Page.Heading == "" || got.About == "" {
			t.Errorf("%v: row %s has no words of the shop's", err, got.Slug)
		}
	}
}
