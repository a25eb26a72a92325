package web

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"exactlyonce/idem"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/problem"
)

// TestDatabaseErrorsAreUnavailable checks the mapping the outage test
// (internal/app) cannot reach on demand: a serialization Failure that
// outlived InTx's retries is a 503 with Retry-After, as an outage is. The
// API and the pages both answer from this one classification.
func TestDatabaseErrorsAreUnavailable(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		fmt.Errorf("claim: %w", database.ErrUnavailable),
		fmt.Errorf("take over: %w", errors.Join(database.ErrSerialization, errors.New("SQLSTATE 40001"))),
	} {
		if f := Classify(err); f.Kind.Status != http.StatusServiceUnavailable || f.RetryAfter <= 0 {
			t.Errorf("%v: got %d with Retry-After %s, want 503 with Retry-After", err, f.Kind.Status, f.RetryAfter)
		}
	}
}

// TestInProgressIsOneError checks that the engine's busy key and the kit's
// are one error: both are request-in-progress, the engine's with its own
// wait, the kit's with a second.
func TestInProgressIsOneError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		wait time.Duration
	}{
		{&checkout.InProgressError{RetryAfter: 7 * time.Second}, 7 * time.Second},
		{fmt.Errorf("claim: %w", idem.ErrInProgress), time.Second},
	} {
		if f := Classify(tc.err); f.Kind != problem.KeyInUse || f.RetryAfter != tc.wait {
			t.Errorf("%v: got %s with Retry-After %s, want %s with %s", tc.err, f.Kind.Slug, f.RetryAfter, problem.KeyInUse.Slug, tc.wait)
		}
	}
}

// TestEveryRowHasPageCopy checks that a page route can answer every row of
// the table with words for a person.
func TestEveryRowHasPageCopy(t *testing.T) {
	t.Parallel()
	for _, k := range append(problem.Kinds, problem.PriceChanged, problem.FormRefused) {
		if k.Page.Heading == "" || k.Page.Message == "" || k.Page.Next.Href == "" {
			t.Errorf("%s: got page copy %+v, want a heading, a message and a link", k.Slug, k.Page)
		}
	}
}
