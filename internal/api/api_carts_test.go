package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// cartClient is one API customer working on one cart.
type cartClient struct {
	h    *apptest.Harness
	c    apptest.Customer
	path string
}

func newCartClient(t *testing.T, h *apptest.Harness) *cartClient {
	t.Helper()
	return &cartClient{h: h, c: h.NewCustomer(t), path: "/api/carts/" + uuid.NewString()}
}

func (cc *cartClient) do(t *testing.T, method, sub, body string, headers ...string) apptest.Response {
	t.Helper()
	return cc.h.Do(t, method, cc.path+sub, body, append([]string{"Authorization", "Bearer " + cc.c.Token}, headers...)...)
}

// apiCart is a cart as the API returns it.
type apiCart struct {
	ID      uuid.UUID  `json:"id"`
	Version int64      `json:"version"`
	Status  string     `json:"status"`
	OrderID *uuid.UUID `json:"order_id"`
	Items   []struct {
		SKU      string `json:"sku"`
		Quantity int    `json:"quantity"`
	} `json:"items"`
}

func wantCart(t *testing.T, r apptest.Response, status int) apiCart {
	t.Helper()
	if r.Status != status {
		t.Fatalf("got %d %s, want %d", r.Status, r.Body, status)
	}
	var ct apiCart
	r.JSON(t, &ct)
	if got, want := r.Header.Get("ETag"), fmt.Sprintf("%q", fmt.Sprint(ct.Version)); got != want {
		t.Errorf("got ETag %s, want %s", got, want)
	}
	return ct
}

// countCarts counts the carts and lines stored, straight from the database.
func countCarts(t *testing.T, h *apptest.Harness) (carts, lines int) {
	t.Helper()
	err := h.DB.Pool.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM carts), (SELECT count(*) FROM cart_lines)`).Scan(&carts, &lines)
	if err != nil {
		t.Fatal(err)
	}
	return carts, lines
}

const twoMugs = `{"items":[{"sku":"mug-espresso","quantity":2},{"sku":"book-retries","quantity":1}]}`

func TestPutCartTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	first := wantCart(t, cc.do(t, http.MethodPut, "", twoMugs), http.StatusOK)
	second := wantCart(t, cc.do(t, http.MethodPut, "", twoMugs), http.StatusOK)
	if first.Version != 1 || second.Version != 1 || len(second.Items) != 2 || second.Status != "open" {
		t.Errorf("got %+v then %+v, want version 1 twice with two lines", first, second)
	}
	got := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK)
	if got.Version != 1 || got.Items[0].SKU != "book-retries" || got.Items[1].Quantity != 2 {
		t.Errorf("GET: got %+v", got)
	}
	changed := wantCart(t, cc.do(t, http.MethodPut, "", `{"items":[{"sku":"mug-espresso","quantity":1}]}`), http.StatusOK)
	if changed.Version != 2 || len(changed.Items) != 1 {
		t.Errorf("replaced: got %+v, want version 2 with one line", changed)
	}
	if carts, lines := countCarts(t, h); carts != 1 || lines != 1 {
		t.Errorf("got %d carts and %d lines stored, want 1 and 1", carts, lines)
	}
}

func TestCartLinesSetAndDeletedTwice(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	wantCart(t, cc.do(t, http.MethodPut, "", `{"items":[]}`), http.StatusOK)
	for i := range 2 {
		ct := wantCart(t, cc.do(t, http.MethodPut, "/items/mug-espresso", `{"quantity":3}`), http.StatusOK)
		if ct.Version != 2 || len(ct.Items) != 1 || ct.Items[0].Quantity != 3 {
			t.Errorf("PUT item #%d: got %+v, want version 2 with 3 mugs", i+1, ct)
		}
	}
	for i := range 2 {
		if r := cc.do(t, http.MethodDelete, "/items/mug-espresso", ""); r.Status != http.StatusNoContent {
			t.Errorf("DELETE item #%d: got %d %s, want 204", i+1, r.Status, r.Body)
		}
	}
	ct := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK)
	if ct.Version != 3 || len(ct.Items) != 0 {
		t.Errorf("after two DELETEs: got %+v, want version 3 and no lines", ct)
	}
	if r := cc.do(t, http.MethodPut, "/items/mug-espresso", `{"quantity":0}`); r.Status != http.StatusOK {
		t.Errorf("PUT quantity 0 of a missing line: got %d", r.Status)
	}
	if ct := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK); ct.Version != 3 {
		t.Errorf("a no-op PUT moved the version to %d", ct.Version)
	}
}

func TestCartLineOfUnstorableSKUIsNoSuchLine(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	wantCart(t, cc.do(t, http.MethodPut, "", `{"items":[{"sku":"mug-espresso","quantity":1}]}`), http.StatusOK)
	// NUL, invalid UTF-8, a control character and an overlong SKU can name
	// no line: PostgreSQL must never see them, and none is a 500.
	for _, sku := range []string{"a%00b", "%FF", "a%0Ab", strings.Repeat("x", 101)} {
		if r := cc.do(t, http.MethodDelete, "/items/"+sku, ""); r.Status != http.StatusNoContent {
			t.Errorf("DELETE %s: got %d %s, want 204", sku, r.Status, r.Body)
		}
		if ct := wantCart(t, cc.do(t, http.MethodPut, "/items/"+sku, `{"quantity":0}`), http.StatusOK); ct.Version != 1 {
			t.Errorf("PUT %s quantity 0: got version %d, want 1", sku, ct.Version)
		}
		apptest.WantProblem(t, cc.do(t, http.MethodPut, "/items/"+sku, `{"quantity":1}`), problem.InvalidRequest)
	}
	if ct := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK); ct.Version != 1 || len(ct.Items) != 1 {
		t.Errorf("got %+v, want version 1 with its one line", ct)
	}
}

func TestCartsAreScopedToTheirCustomer(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	alice := newCartClient(t, h)
	wantCart(t, alice.do(t, http.MethodPut, "", twoMugs), http.StatusOK)
	bob := &cartClient{h: h, c: h.NewCustomer(t), path: alice.path}
	for _, tc := range []struct{ method, sub, body string }{
		{http.MethodGet, "", ""},
		{http.MethodPut, "", `{"items":[]}`},
		{http.MethodPut, "/items/mug-espresso", `{"quantity":9}`},
		{http.MethodDelete, "/items/mug-espresso", ""},
		{http.MethodPost, "/order", ""},
	} {
		apptest.WantProblem(t, bob.do(t, tc.method, tc.sub, tc.body), problem.NotFound)
	}
	if ct := wantCart(t, alice.do(t, http.MethodGet, "", ""), http.StatusOK); ct.Version != 1 || len(ct.Items) != 2 {
		t.Errorf("Alice's cart after Bob's calls: got %+v, want it untouched", ct)
	}
	h.WantNothingStored(t)
}

func TestBadCartInputStoresNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	for _, tc := range []struct{ name, method, sub, body string }{
		{"not json", http.MethodPut, "", `{"items":`},
		{"no items member", http.MethodPut, "", `{}`},
		{"unknown member", http.MethodPut, "", `{"items":[],"coupon":"free"}`},
		{"unknown sku", http.MethodPut, "", `{"items":[{"sku":"no-such-thing","quantity":1}]}`},
		{"zero quantity", http.MethodPut, "", `{"items":[{"sku":"mug-espresso","quantity":0}]}`},
		{"quantity too large", http.MethodPut, "", `{"items":[{"sku":"mug-espresso","quantity":100}]}`},
		{"sku twice", http.MethodPut, "", `{"items":[{"sku":"mug-espresso","quantity":1},{"sku":"mug-espresso","quantity":1}]}`},
		{"51 lines", http.MethodPut, "", `{"items":[` + strings.Repeat(`{"sku":"mug-espresso","quantity":1},`, 50) + `{"sku":"mug-espresso","quantity":1}]}`},
		{"line without quantity", http.MethodPut, "/items/mug-espresso", `{}`},
		{"negative line quantity", http.MethodPut, "/items/mug-espresso", `{"quantity":-1}`},
		{"line of an unknown sku", http.MethodPut, "/items/no-such-thing", `{"quantity":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.WantProblem(t, cc.do(t, tc.method, tc.sub, tc.body), problem.InvalidRequest)
		})
	}
	apptest.WantProblem(t, h.Do(t, http.MethodPut, "/api/carts/not-a-uuid", `{"items":[]}`, "Authorization", "Bearer "+cc.c.Token), problem.NotFound)
	apptest.WantProblem(t, h.Do(t, http.MethodPut, cc.path, `{"items":[]}`), problem.Unauthorized)
	if carts, lines := countCarts(t, h); carts != 0 || lines != 0 {
		t.Errorf("got %d carts and %d lines stored, want none", carts, lines)
	}
}

func TestOrderCartWithoutKeyIsOneOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	wantCart(t, cc.do(t, http.MethodPut, "", twoMugs), http.StatusOK)
	first := cc.do(t, http.MethodPost, "/order", "")
	if first.Status != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", first.Status, first.Body)
	}
	// A client that lost the answer retries without a key: the same order.
	again := cc.do(t, http.MethodPost, "/order", "")
	if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Errorf("retry: got %d replayed=%q, want the stored 201 replayed", again.Status, again.Header.Get("Idempotent-Replayed"))
	}
	ct := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK)
	if ct.Status != "ordered" || ct.OrderID == nil || "/api/orders/"+ct.OrderID.String() != first.Header.Get("Location") {
		t.Errorf("got %+v, want the cart ordered as %s", ct, first.Header.Get("Location"))
	}
	// Closed: no more changes, and another key cannot order it again.
	apptest.WantProblem(t, cc.do(t, http.MethodPut, "/items/mug-espresso", `{"quantity":5}`), problem.CartOrdered)
	apptest.WantProblem(t, cc.do(t, http.MethodPost, "/order", "", "Idempotency-Key", "another-key"), problem.CartOrdered)
	h.WantStats(t, 1, 1)
}

func TestOrderCartWithoutKeyAfterDeclineIsNewOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	wantCart(t, cc.do(t, http.MethodPut, "", twoMugs), http.StatusOK)
	if r := cc.do(t, http.MethodPost, "/order", `{"card":"4000000000000002"}`); r.Status != http.StatusPaymentRequired {
		t.Fatalf("declined card: got %d %s, want 402", r.Status, r.Body)
	}
	// The decline released the cart under a new version, so the derived
	// key of the next order is a new key, not the declined one reused.
	if ct := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK); ct.Version != 2 || ct.Status != "open" {
		t.Errorf("after the decline: got %+v, want version 2, open", ct)
	}
	if r := cc.do(t, http.MethodPost, "/order", `{"card":"4242424242424242"}`); r.Status != http.StatusCreated {
		t.Fatalf("another card: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
}

func TestOrderCartCardSpellingIsOneRequest(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	wantCart(t, cc.do(t, http.MethodPut, "", twoMugs), http.StatusOK)
	first := cc.do(t, http.MethodPost, "/order", `{"card":"4242424242424242"}`)
	if first.Status != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", first.Status, first.Body)
	}
	// The same card typed with a space and a dash in its last digits is
	// the same request: replayed, not 422 idempotency-key-reused.
	again := cc.do(t, http.MethodPost, "/order", `{"card":"4242 4242 4242 42-4 2 "}`)
	if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("spelled card: got %d %s, want the stored 201 replayed", again.Status, again.Body)
	}
	h.WantStats(t, 1, 1)
}

func TestOrderCartWithKeyAndIfMatch(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	wantCart(t, cc.do(t, http.MethodPut, "", twoMugs), http.StatusOK)
	apptest.WantProblem(t, cc.do(t, http.MethodPost, "/order", "", "If-Match", `"7"`), problem.CartVersionMismatch)
	apptest.WantProblem(t, cc.do(t, http.MethodPost, "/order", `{"card":"4242424242424242"}`, "If-Match", `"abc"`), problem.InvalidRequest)
	apptest.WantProblem(t, cc.do(t, http.MethodPost, "/order", `{"items":[]}`), problem.InvalidRequest)
	h.WantNothingStored(t)

	order := func() apptest.Response {
		return cc.do(t, http.MethodPost, "/order", `{"card":"4242 4242 4242 4242"}`, "Idempotency-Key", `"k-1"`, "If-Match", `"1"`)
	}
	if r := order(); r.Status != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", r.Status, r.Body)
	}
	if r := order(); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("repeat: got %d, want the replay", r.Status)
	}
	// The same key for another card is another request.
	apptest.WantProblem(t, cc.do(t, http.MethodPost, "/order", `{"card":"4000000000000002"}`, "Idempotency-Key", `"k-1"`), problem.KeyReused)
	h.WantStats(t, 1, 1)
}

func TestEmptyCartOrderStoresNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	wantCart(t, cc.do(t, http.MethodPut, "", `{"items":[]}`), http.StatusOK)
	apptest.WantProblem(t, cc.do(t, http.MethodPost, "/order", ""), problem.InvalidRequest)
	h.WantNothingStored(t)
}

// TestCartCallsRaced sends every cart call many times at once and checks
// what the database holds: the same as after one call each.
func TestCartCallsRaced(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	cc := newCartClient(t, h)
	const n = 8
	race := func(call func(i int) apptest.Response) []apptest.Response {
		out := make([]apptest.Response, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[i] = call(i)
			}()
		}
		close(start)
		wg.Wait()
		return out
	}

	for _, r := range race(func(int) apptest.Response { return cc.do(t, http.MethodPut, "", twoMugs) }) {
		if r.Status != http.StatusOK {
			t.Errorf("PUT cart: got %d %s", r.Status, r.Body)
		}
	}
	if ct := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK); ct.Version != 1 {
		t.Errorf("after %d PUTs at once: got version %d, want 1", n, ct.Version)
	}
	race(func(int) apptest.Response { return cc.do(t, http.MethodPut, "/items/tee-idempotent", `{"quantity":2}`) })
	race(func(int) apptest.Response { return cc.do(t, http.MethodDelete, "/items/book-retries", "") })
	if ct := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK); ct.Version != 3 || len(ct.Items) != 2 {
		t.Errorf("after racing PUT item and DELETE: got %+v, want version 3 with two lines", ct)
	}
	if carts, lines := countCarts(t, h); carts != 1 || lines != 2 {
		t.Errorf("got %d carts and %d lines stored, want 1 and 2", carts, lines)
	}

	// Orders at once, half with a key of their own and half without: one
	// charge, one order; every other answer is the order replayed, in
	// progress, or the cart already ordered.
	statuses := map[int]int{}
	for _, r := range race(func(i int) apptest.Response {
		if i%2 == 0 {
			return cc.do(t, http.MethodPost, "/order", "")
		}
		return cc.do(t, http.MethodPost, "/order", "", "Idempotency-Key", fmt.Sprintf("k-%d", i))
	}) {
		statuses[r.Status]++
		if r.Status != http.StatusCreated && r.Status != http.StatusConflict {
			t.Errorf("order: got %d %s, want 201 or 409", r.Status, r.Body)
		}
	}
	if statuses[http.StatusCreated] < 1 {
		t.Errorf("got statuses %v, want at least one 201", statuses)
	}
	h.WantStats(t, 1, 1)
	if ct := wantCart(t, cc.do(t, http.MethodGet, "", ""), http.StatusOK); ct.Status != "ordered" {
		t.Errorf("got cart %+v, want it ordered", ct)
	}
}
