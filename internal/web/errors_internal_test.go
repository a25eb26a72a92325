package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

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
		// SQLSTATEs answered 500 before they were translated by class.
		fmt.Errorf("claim: %w", database.Translate(&pgconn.PgError{Code: "40P01"})),
		fmt.Errorf("claim: %w", database.Translate(&pgconn.PgError{Code: "53100"})),
		fmt.Errorf("claim: %w", database.Translate(&pgconn.PgError{Code: "53200"})),
		fmt.Errorf("claim: %w", database.Translate(&pgconn.PgError{Code: "57P05"})),
		fmt.Errorf("claim: %w", database.Translate(&pgconn.PgError{Code: "25P03"})),
	} {
		if f := Classify(err); f.Kind.Status != http.StatusServiceUnavailable || f.RetryAfter <= 0 {
			t.Errorf("%v: got %d with Retry-After %s, want 503 with Retry-After", err, f.Kind.Status, f.RetryAfter)
		}
	}
}

// TestConflictIsNotCalledAnOutage: a transaction PostgreSQL rolled back in
// a conflict with another (a deadlock, a serialization failure) is a 503 as
// an outage is, but its detail says what happened: "cannot be reached"
// sent an operator and a client looking for an outage that was not there.
func TestConflictIsNotCalledAnOutage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("finish order: %w", database.Translate(&pgconn.PgError{Code: "40P01"})), "conflict"},
		{fmt.Errorf("claim: %w", database.Translate(&pgconn.PgError{Code: "40001"})), "conflict"},
		{fmt.Errorf("claim: %w", database.Translate(&pgconn.PgError{Code: "57P01"})), "cannot be reached"},
		{fmt.Errorf("claim: %w", idem.ErrUnavailable), "cannot be reached"},
	} {
		if f := Classify(tc.err); !strings.Contains(f.Detail, tc.want) {
			t.Errorf("%v: got detail %q, want it to say %q", tc.err, f.Detail, tc.want)
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

// TestClientGoneIsNoServerError: a request whose client hung up (its
// context cancelled) while the engine waited is logged as the client's
// going, with 499, not as a 500: the chaos harness found such 500s in the
// shops' logs behind a stalled database and a row lock, "claim key:
// context canceled", each an error line for an operator. A cancellation
// while the client is still there is ours and stays a 500.
func TestClientGoneIsNoServerError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		hungUp     bool
		want       int
		wantLogged string
	}{
		{"client hung up", true, StatusClientClosedRequest, "level=INFO msg=\"client went away\""},
		{"client still there", false, http.StatusInternalServerError, "level=ERROR msg=\"request failed\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			if tc.hungUp {
				cancel()
			} else {
				defer cancel()
			}
			var logged bytes.Buffer
			e := &Errors{Log: slog.New(slog.NewTextHandler(&logged, nil))}
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/orders", nil)
			rec := httptest.NewRecorder()
			e.answer(echo.New().NewContext(req, rec), fmt.Errorf("claim key: %w", context.Canceled), WriteProblem)
			if rec.Code != tc.want {
				t.Errorf("got status %d, want %d", rec.Code, tc.want)
			}
			if !strings.Contains(logged.String(), tc.wantLogged) {
				t.Errorf("got log %q, want %s", logged.String(), tc.wantLogged)
			}
		})
	}
}
