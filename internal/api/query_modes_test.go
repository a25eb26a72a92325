package api_test

import (
	"net/http"
	"os"
	"slices"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/problem"
)

// Every query exec mode DB_QUERY_MODE offers keeps the API's contract: an
// order is placed and charged once, its retry replayed, a reused key
// refused; a pickup (the kit's middleware) reserved and replayed; a cart
// made and ordered. In exec and simple_protocol every parameter travels as
// text typed from its Go type, which is where a []byte meant as JSON turns
// into bytea text (22P02) — the whole suite in one mode is make
// test/querymodes.
func TestContractInEveryQueryMode(t *testing.T) {
	modes := make([]string, 0, len(database.QueryModes))
	for m := range database.QueryModes {
		modes = append(modes, m)
	}
	slices.Sort(modes)
	// Behind a transaction pooler (make test/pgbouncer sets
	// TEST_ADMIN_DATABASE_URL), the modes that need one server connection
	// across round trips cannot work, as DB_QUERY_MODE's documentation
	// says (database.QueryModes): they are run on a direct connection.
	pooled := os.Getenv("TEST_ADMIN_DATABASE_URL") != ""
	needsSession := map[string]string{
		"cache_statement": "named prepared statements live on one server connection",
		"describe_exec":   "its describe and its execute are two round trips, which may reach two server connections",
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			if why, ok := needsSession[mode]; ok && pooled {
				t.Skipf("not behind a transaction pooler: %s", why)
			}
			t.Parallel()
			h := apptest.NewInQueryMode(t, mode)
			c := h.NewCustomer(t)
			auth := []string{"Authorization", "Bearer " + c.Token}

			first := h.PlaceOrder(t, c, `"o-1"`, oneMug)
			if first.Status != http.StatusCreated {
				t.Fatalf("place: got %d %s, want 201", first.Status, first.Body)
			}
			var rc checkout.Receipt
			first.JSON(t, &rc)
			again := h.PlaceOrder(t, c, `"o-1"`, oneMug)
			if again.Status != http.StatusCreated || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("retry: got %d %s, want the first answer replayed", again.Status, again.Body)
			}
			apptest.WantProblem(t, h.PlaceOrder(t, c, `"o-1"`, `{"items": [{"sku": "sticker-pack", "quantity": 1}]}`), problem.KeyReused)
			if got := h.Do(t, http.MethodGet, first.Header.Get("Location"), "", auth...); got.Status != http.StatusOK {
				t.Fatalf("get order: got %d %s", got.Status, got.Body)
			}
			h.WantStats(t, 1, 1)

			pick := h.Do(t, http.MethodPost, "/api/pickups", `{"slot": "mon-am", "name": "Ada"}`, append(auth, "Idempotency-Key", `"p-1"`)...)
			pickAgain := h.Do(t, http.MethodPost, "/api/pickups", `{"slot": "mon-am", "name": "Ada"}`, append(auth, "Idempotency-Key", `"p-1"`)...)
			if pick.Status != http.StatusCreated || pickAgain.Header.Get("Idempotent-Replayed") != "true" || string(pickAgain.Body) != string(pick.Body) {
				t.Fatalf("pickup: got %d %s then %d %s, want 201 replayed", pick.Status, pick.Body, pickAgain.Status, pickAgain.Body)
			}

			cart := "/api/carts/" + uuid.NewString()
			if got := h.Do(t, http.MethodPut, cart, twoMugs, auth...); got.Status != http.StatusOK && got.Status != http.StatusCreated {
				t.Fatalf("cart: got %d %s, want it stored", got.Status, got.Body)
			}
			ordered := h.Do(t, http.MethodPost, cart+"/order", `{}`, append(auth, "Idempotency-Key", `"c-1"`)...)
			if ordered.Status != http.StatusCreated {
				t.Fatalf("order the cart: got %d %s, want 201", ordered.Status, ordered.Body)
			}
		})
	}
}
