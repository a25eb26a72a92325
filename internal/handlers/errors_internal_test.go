package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"exactlyonce/internal/database"
)

// TestDatabaseErrorsAreUnavailable checks the mapping the outage test
// (internal/app) cannot reach on demand: a serialization failure that
// outlived InTx's retries is a 503 with Retry-After, as an outage is, for
// the API and for a page.
func TestDatabaseErrorsAreUnavailable(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		fmt.Errorf("claim: %w", database.ErrUnavailable),
		fmt.Errorf("take over: %w", errors.Join(database.ErrSerialization, errors.New("SQLSTATE 40001"))),
	} {
		if ae := toAPIError(err); ae.kind.Status != http.StatusServiceUnavailable || ae.retryAfter <= 0 {
			t.Errorf("API, %v: got %d with Retry-After %s, want 503 with Retry-After", err, ae.kind.Status, ae.retryAfter)
		}
		if pe := toPageError(err); pe.status != http.StatusServiceUnavailable || pe.retryAfter <= 0 {
			t.Errorf("page, %v: got %d with Retry-After %s, want 503 with Retry-After", err, pe.status, pe.retryAfter)
		}
	}
}
