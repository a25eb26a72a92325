package checkout_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pgtest"
)

// A provider that answers a 4xx other than a decline (here the
// idempotency_error a reused provider key gets) has not said whether it
// charged. The attempt must end as an unknown outcome the client may retry
// (502 with Retry-After at the HTTP edge), never as an unexpected error (500),
// and the key must stay started for a retry or the completer to settle.
func TestProviderRefusalIsAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error": {"type": "idempotency_error", "message": "Keys for idempotent requests can only be used with the same parameters they were first used with."}}`))
	}))
	t.Cleanup(provider.Close)

	d := database.New(pgtest.NewPool(t))
	ctx := context.Background()
	if err := catalog.Seed(ctx, d.Queries); err != nil {
		t.Fatal(err)
	}
	customer := uuid.New()
	if err := d.CreateCustomer(ctx, db.CreateCustomerParams{ID: customer, Name: "refused"}); err != nil {
		t.Fatal(err)
	}
	payments := payment.NewClient(payment.Config{SecretKey: "sk_test", APIBase: provider.URL, Timeout: 5 * time.Second})
	e := checkout.New(d, catalog.New(d.Queries, time.Hour), payments, checkout.Config{LockTimeout: 30 * time.Second})

	_, err := e.Place(ctx, attempt(customer, "k"))
	var pe *checkout.OutcomeUnknownError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *checkout.OutcomeUnknownError", err)
	}
	if pe.Reason != payment.ReasonFailed || pe.RetryAfter <= 0 {
		t.Errorf("got reason %s, retry after %s; want failed (an unknown outcome) with a retry time", pe.Reason, pe.RetryAfter)
	}
	k, err := d.GetKey(ctx, db.GetKeyParams{CustomerID: customer, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if k.Status != "started" || k.ResponseStatus != nil {
		t.Errorf("got key %s with response %v, want started with no answer stored", k.Status, k.ResponseStatus)
	}
}
