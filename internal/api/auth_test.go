package api_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/db"
)

// Verified tokens are remembered, so that a client's later requests cost no
// lookup; an unknown token must never be remembered as unknown, or a token
// issued right after a failed attempt would be refused.
func TestBearerTokensAreRememberedOnlyWhenValid(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for range 2 {
		if r := h.Do(t, http.MethodGet, "/api/orders", "", "Authorization", "Bearer "+c.Token); r.Status != http.StatusOK {
			t.Fatalf("known token: got %d %s, want 200", r.Status, r.Body)
		}
	}

	token := "tok_not-issued-yet-" + uuid.NewString()
	if r := h.Do(t, http.MethodGet, "/api/orders", "", "Authorization", "Bearer "+token); r.Status != http.StatusUnauthorized {
		t.Fatalf("unknown token: got %d %s, want 401", r.Status, r.Body)
	}
	sum := sha256.Sum256([]byte(token))
	if err := h.DB.CreateCustomer(context.Background(), db.CreateCustomerParams{ID: uuid.New(), Name: "late", TokenHash: sum[:]}); err != nil {
		t.Fatal(err)
	}
	if r := h.Do(t, http.MethodGet, "/api/orders", "", "Authorization", "Bearer "+token); r.Status != http.StatusOK {
		t.Errorf("token issued after a refusal: got %d %s, want 200", r.Status, r.Body)
	}
}
