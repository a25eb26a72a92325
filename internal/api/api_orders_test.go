package api_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
)

const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

func TestPlaceOrderComputesAmountOnServer(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, "k", `{"items": [{"sku": "mug-espresso", "quantity": 2}, {"sku": "sticker-pack", "quantity": 1}]}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", r.Status, r.Body)
	}
	var rc checkout.Receipt
	r.JSON(t, &rc)
	if want := int64(2*1200 + 450); rc.Amount != want || rc.Currency != "eur" || rc.Status != "paid" || rc.ChargeID == "" {
		t.Errorf("got receipt %+v, want amount %d eur, paid, with a charge", rc, want)
	}
	if got, want := r.Header.Get("Location"), "/api/orders/"+rc.OrderID.String(); got != want {
		t.Errorf("got Location %q, want %q", got, want)
	}
	get := h.Do(t, http.MethodGet, r.Header.Get("Location"), "", "Authorization", "Bearer "+c.Token)
	if get.Status != http.StatusOK {
		t.Fatalf("get order: got %d %s", get.Status, get.Body)
	}
	var view checkout.Receipt
	get.JSON(t, &view)
	if view.OrderID != rc.OrderID || view.Amount != rc.Amount || len(view.Items) != 2 {
		t.Errorf("got order %+v, want %+v", view, rc)
	}
}

func TestMissingKeyStoresNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	apptest.WantProblem(t, h.PlaceOrder(t, c, "", oneMug), problem.MissingKey)
	if s := h.Stats(t); s.KeysStarted+s.KeysFinished != 0 || s.Charges != 0 {
		t.Errorf("got %+v, want nothing stored", s)
	}
}

func TestIdempotencyKeyForms(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	// The quoted Structured Field form and the bare form name the same key.
	if r := h.PlaceOrder(t, c, `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, oneMug); r.Status != http.StatusCreated {
		t.Fatalf("quoted key: got %d %s", r.Status, r.Body)
	}
	r := h.PlaceOrder(t, c, `8e03978e-40d5-43e8-bc93-6894a57f9324`, oneMug)
	if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("bare key: got %d replayed=%q, want a replay of the quoted key's order", r.Status, r.Header.Get("Idempotent-Replayed"))
	}
	for name, key := range map[string]string{
		"too long":        strings.Repeat("k", 256),
		"not ascii":       "clé",
		"bad sf string":   `"unterminated`,
		"sf with params":  `"abc";x=1`,
		"sf not a string": `"a" , "b"`,
		"empty sf string": `""`,
	} {
		apptest.WantProblem(t, h.PlaceOrder(t, c, key, oneMug), problem.InvalidKey)
		_ = name
	}
	h.WantStats(t, 1, 1)
}

func TestBadBodyLeavesKeyUsable(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for _, body := range []string{
		`{"items": [`,
		`{"items": []}`,
		`{"items": [{"sku": "no-such-thing", "quantity": 1}]}`,
		`{"items": [{"sku": "mug-espresso", "quantity": 0}]}`,
		`{"items": [{"sku": "mug-espresso", "quantity": "1"}]}`,
		`{"items": [{"sku": "mug-espresso", "quantity": 1}], "amount": 1}`,
	} {
		p := apptest.WantProblem(t, h.PlaceOrder(t, c, "k", body), problem.InvalidRequest)
		if p.Detail == "" {
			t.Errorf("body %s: got no detail, want the reason", body)
		}
	}
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Errorf("fixed body with the same key: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
}

func TestKeysAreScopedToTheCustomer(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	alice, bob := h.NewCustomer(t), h.NewCustomer(t)
	a := h.PlaceOrder(t, alice, "shared-key", oneMug)
	b := h.PlaceOrder(t, bob, "shared-key", oneMug)
	if a.Status != http.StatusCreated || b.Status != http.StatusCreated || b.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("got %d and %d (replayed %q), want two new orders", a.Status, b.Status, b.Header.Get("Idempotent-Replayed"))
	}
	h.WantStats(t, 2, 2)

	// Bob cannot read Alice's order: it does not exist for him.
	apptest.WantProblem(t, h.Do(t, http.MethodGet, a.Header.Get("Location"), "", "Authorization", "Bearer "+bob.Token), problem.NotFound)
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	r := h.Do(t, http.MethodPost, "/api/orders", oneMug, "Idempotency-Key", "k")
	apptest.WantProblem(t, r, problem.Unauthorized)
	if r.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	apptest.WantProblem(t, h.Do(t, http.MethodPost, "/api/orders", oneMug, "Idempotency-Key", "k", "Authorization", "Bearer tok_nope"), problem.Unauthorized)
	if s := h.Stats(t); s.KeysStarted+s.KeysFinished != 0 {
		t.Errorf("got %+v, want nothing stored", s)
	}
}

func TestDeclineIsStoredAndReplayed(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	body := `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "4000000000000002"}`
	first := apptest.WantProblem(t, h.PlaceOrder(t, c, "k", body), problem.PaymentDeclined)
	r := h.PlaceOrder(t, c, "k", body)
	second := apptest.WantProblem(t, r, problem.PaymentDeclined)
	if r.Header.Get("Idempotent-Replayed") != "true" || !reflect.DeepEqual(first, second) {
		t.Errorf("got %+v (replayed %q), want a replay of %+v", second, r.Header.Get("Idempotent-Replayed"), first)
	}
	if first.DeclineCode != "generic_decline" {
		t.Errorf("got decline_code %q, want generic_decline, as Stripe names the issuer's reason", first.DeclineCode)
	}
	if s := h.Stats(t); s.Orders != 0 || s.KeysFinished != 1 {
		t.Errorf("got %+v, want no order and one finished key", s)
	}
	// Another issuer's reason is passed on as given.
	body = `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "4000000000009995"}`
	if p := apptest.WantProblem(t, h.PlaceOrder(t, c, "k2", body), problem.PaymentDeclined); p.DeclineCode != "insufficient_funds" {
		t.Errorf("got decline_code %q, want insufficient_funds", p.DeclineCode)
	}
}

func TestProviderOutageStoresNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	h.SetProvider(t, 0, "before_charge")
	r := h.PlaceOrder(t, c, "k", oneMug)
	apptest.WantProblem(t, r, problem.OutcomeUnknown)
	// The key was handed back: a retry after 2 s takes it over at once,
	// rather than wait out the 30 s lock.
	if r.Header.Get("Retry-After") != "2" {
		t.Errorf("got Retry-After %q, want 2", r.Header.Get("Retry-After"))
	}
	if s := h.Stats(t); s.KeysStarted != 1 || s.KeysFinished != 0 || s.Charges != 0 {
		t.Errorf("got %+v, want one started key and no charge", s)
	}
	h.WaitLockExpired(t, c, "k") // at once: its lease was ended
}

// The shop alone has no demo controls: they are the lab's (demo/lab, whose
// tests check them with the lab mounted).
func TestNoDemoControlsInTheShop(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	apptest.WantProblem(t, h.Do(t, http.MethodGet, "/api/demo/stats", ""), problem.NotFound)
	apptest.WantProblem(t, h.Do(t, http.MethodPut, "/api/demo/provider", `{"fail":"decline"}`), problem.NotFound)
}

func TestProductsAndCustomers(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	r := h.Do(t, http.MethodGet, "/api/products", "")
	var products []struct {
		SKU      string `json:"sku"`
		Price    int64  `json:"price"`
		Currency string `json:"currency"`
	}
	r.JSON(t, &products)
	if r.Status != http.StatusOK || len(products) == 0 || products[0].Price <= 0 {
		t.Errorf("got %d %s, want the priced catalog", r.Status, r.Body)
	}
	if r := h.Do(t, http.MethodPost, "/api/customers", ""); r.Status != http.StatusCreated {
		t.Errorf("customer without body: got %d %s, want 201", r.Status, r.Body)
	}
	apptest.WantProblem(t, h.Do(t, http.MethodPost, "/api/customers", `{"nmae":"typo"}`), problem.InvalidRequest) //nolint:misspell // the typo is the test: an unknown field
}
