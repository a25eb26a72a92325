package api_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// The tests of this file back the "Bad input" table of docs/security.md:
// each bad input gets a 4xx and stores nothing, checked in the database.

// wantNoKeys fails unless the database holds no key, charge or order.
func wantNoKeys(t *testing.T, h *apptest.Harness) {
	t.Helper()
	if s := h.Stats(t); s.KeysStarted+s.KeysFinished+s.Charges+s.Orders != 0 {
		t.Errorf("got %+v, want nothing stored", s)
	}
}

func TestInvalidCardIsRefusedBeforeTheClaim(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for name, card := range map[string]string{
		"letters":   "abc",
		"20 digits": "42424242424242424242",
		"NUL":       `4242424242424242\u0000`,
		"blanks":    "    ",
		"11 digits": "42424242424",
	} {
		body := `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "` + card + `"}`
		p := apptest.WantProblem(t, h.PlaceOrder(t, c, "k", body), problem.InvalidRequest)
		if p.Detail == "" {
			t.Errorf("%s: got no detail, want the reason", name)
		}
	}
	wantNoKeys(t, h)
	// Spaces and dashes are what people type; the form accepts them too.
	r := h.PlaceOrder(t, c, "k", `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "4242 4242-4242 4242"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("same key, valid card: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
}

func TestMemberNamesMustMatchExactly(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for name, body := range map[string]string{
		"case variant of items": `{"items": [{"sku": "mug-espresso", "quantity": 1}], "Items": [{"sku": "sticker-pack", "quantity": 1}]}`,
		"case variant of card":  `{"items": [{"sku": "mug-espresso", "quantity": 1}], "Card": "4242424242424242"}`,
		"case variant in item":  `{"items": [{"SKU": "mug-espresso", "quantity": 1}]}`,
		"duplicate":             `{"items": [{"sku": "mug-espresso", "quantity": 1}], "items": [{"sku": "sticker-pack", "quantity": 1}]}`,
		"duplicate in item":     `{"items": [{"sku": "mug-espresso", "sku": "sticker-pack", "quantity": 1}]}`,
		"unknown":               `{"items": [{"sku": "mug-espresso", "quantity": 1}], "coupon": "FREE"}`,
		"trailing ]":            `{"items": [{"sku": "mug-espresso", "quantity": 1}]}]`,
		"trailing }":            `{"items": [{"sku": "mug-espresso", "quantity": 1}]}}`,
		"second value":          `{"items": [{"sku": "mug-espresso", "quantity": 1}]} {}`,
		"invalid UTF-8":         "{\"items\": [{\"sku\": \"mug-espresso\xff\", \"quantity\": 1}]}",
	} {
		r := h.PlaceOrder(t, c, "k", body)
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: got %d %s, want 400", name, r.Status, r.Body)
			continue
		}
		apptest.WantProblem(t, r, problem.InvalidRequest)
	}
	wantNoKeys(t, h)
}

// Two bodies that decode to one order share a fingerprint, so the second is
// a replay; two that decode to different orders never do.
func TestFingerprintIsOfTheDecodedRequest(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	first := h.PlaceOrder(t, c, "k", `{"items": [{"sku": "mug-espresso", "quantity": 1}, {"sku": "sticker-pack", "quantity": 2}]}`)
	if first.Status != http.StatusCreated {
		t.Fatalf("first: got %d %s", first.Status, first.Body)
	}
	for name, body := range map[string]string{
		"reordered and respaced": "{\"card\":\"4242424242424242\",\n\"items\":[{\"quantity\":2,\"sku\":\"sticker-pack\"},{\"quantity\":1,\"sku\":\"mug-espresso\"}]}",
		"card spelt with dashes": `{"items": [{"sku": "mug-espresso", "quantity": 1}, {"sku": "sticker-pack", "quantity": 2}], "card": "4242-4242-4242-4242"}`,
	} {
		r := h.PlaceOrder(t, c, "k", body)
		if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, first.Body) {
			t.Errorf("%s: got %d replayed=%q, want the first answer replayed", name, r.Status, r.Header.Get("Idempotent-Replayed"))
		}
	}
	apptest.WantProblem(t, h.PlaceOrder(t, c, "k", `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`), problem.KeyReused)
	h.WantStats(t, 1, 1)
}

func TestCustomerNameMustBeText(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	for name, body := range map[string]string{
		"NUL":           `{"name": "a\u0000b"}`,
		"control":       `{"name": "a\u001bb"}`,
		"invalid UTF-8": "{\"name\": \"a\xffb\"}",
		"case variant":  `{"Name": "x"}`,
	} {
		r := h.Do(t, http.MethodPost, "/api/customers", body)
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: got %d %s, want 400", name, r.Status, r.Body)
			continue
		}
		apptest.WantProblem(t, r, problem.InvalidRequest)
	}
	var n int
	if err := h.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM customers").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("got %d customers, want none stored", n)
	}
}

func TestReplayDoesNotDependOnTodaysCatalog(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.CatalogMaxAge = time.Nanosecond })
	c := h.NewCustomer(t)
	first := h.PlaceOrder(t, c, "k", oneMug)
	if first.Status != http.StatusCreated {
		t.Fatalf("first: got %d %s", first.Status, first.Body)
	}
	wantReplayOf := func(when string) {
		t.Helper()
		r := h.PlaceOrder(t, c, "k", oneMug)
		if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, first.Body) {
			t.Errorf("%s: got %d %s, want the stored answer replayed", when, r.Status, r.Body)
		}
	}
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if _, err := h.DB.Pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(`DELETE FROM products WHERE sku = 'mug-espresso'`)
	wantReplayOf("product left the catalog")
	// A new key for the same order is refused as before: nothing to sell.
	apptest.WantProblem(t, h.PlaceOrder(t, c, "k2", oneMug), problem.InvalidRequest)

	exec(`ALTER TABLE products RENAME TO products_away`)
	wantReplayOf("catalog cannot load")
	h.WantStats(t, 1, 1)
}

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		if r := h.Do(t, http.MethodGet, "/api/orders", "", "Authorization", scheme+" "+c.Token); r.Status != http.StatusOK {
			t.Errorf("%s: got %d %s, want 200", scheme, r.Status, r.Body)
		}
	}
	for _, auth := range []string{"Basic " + c.Token, "Bearer", "Bearer    ", c.Token} {
		apptest.WantProblem(t, h.Do(t, http.MethodGet, "/api/orders", "", "Authorization", auth), problem.Unauthorized)
	}
}
