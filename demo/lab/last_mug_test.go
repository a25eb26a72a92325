package lab_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/demo/lab"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
)

// labMug is the SKU of the last-mug scenario's own mug.
const labMug = "lab-last-mug"

// TestLastMug runs "two shoppers, one mug left" against the real shop and
// counts across the whole database and the whole fake provider, not only
// the run's shoppers: one order, one charge, one PaymentIntent, one key;
// the other shopper told "sold out" with nothing started. The lab's mug
// ends with none on hand and its stock adding up, and the shop's own
// espresso mug keeps no stock (the lab took none of it). A claim that
// reserved nothing would give both shoppers the mug: two orders.
func TestLastMug(t *testing.T) {
	t.Parallel()
	h, r := run(t, "last-mug")

	var got []string
	lanes := map[string]bool{}
	var won, refused lab.Attempt
	for _, a := range r.Attempts {
		got = append(got, outcome(a))
		lanes[a.Lane] = true
		switch outcome(a) {
		case "201 held":
			won = a
		case "409 " + problem.SoldOut.Slug:
			refused = a
		}
	}
	if len(r.Attempts) != 2 || won.N == 0 || refused.N == 0 {
		t.Fatalf("got attempts %q, want one 201 held and one 409 %s", got, problem.SoldOut.Slug)
	}
	if len(lanes) != 2 || r.LaneNoun != "shopper" || len(r.Shoppers) != 2 {
		t.Errorf("got %d lanes of %q for %d shoppers, want a lane for each of two shoppers", len(lanes), r.LaneNoun, len(r.Shoppers))
	}
	// The refusal comes while the winner is still at the (300 ms) provider.
	if refused.End >= won.End {
		t.Errorf("sold out answered at %v, after the order at %v: want it before any charge", refused.End, won.End)
	}
	wantMarks(t, r, "mug reserved", "sold out")
	wantFact(t, r, "told sold out", "no key, 0 intents")
	wantFact(t, r, "left", "0")

	intents, err := h.Provider.Ledger(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(intents) != 1 {
		t.Errorf("got %d PaymentIntents at the provider, want 1 (none for the shopper told sold out)", len(intents))
	}
	if got := h.Count(t, `SELECT count(*) FROM idem_keys_v1`); got != 1 {
		t.Errorf("got %d keys, want 1: the refused claim must leave none", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM stock_reservations WHERE sku = $1 AND state = 'sold'`, labMug); got != 1 {
		t.Errorf("got %d sold reservations of the lab's mug, want 1", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM stock_reservations WHERE sku <> $1`, labMug); got != 0 {
		t.Errorf("got %d reservations of other products, want none", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM stock WHERE sku = 'mug-espresso'`); got != 0 {
		t.Errorf("the shop's espresso mug keeps stock after the run (%d rows): want it made to order, as before", got)
	}
	wantLabMugStock(t, h, 0, 1)
	wantCatalogSoldOut(t, h)
	wantBothShoppersNamed(t, h, r)

	// A second run receives the next mug: the lab's mug has sold two, and
	// received two.
	r2, err := labOf(h).Run(t.Context(), "last-mug")
	if err != nil || !r2.AsExpected {
		t.Fatalf("second run: got %v, as expected %v (%s, notes %q)", err, r2.AsExpected, r2.Error, r2.Notes)
	}
	h.WantStats(t, 2, 2)
	wantLabMugStock(t, h, 0, 2)
}

// TestLastMugTakesNoStockAway: with more than one of the lab's mugs on
// hand (an operator received some), the lab does not take them away to
// make one left; the run says it could not be carried out, and orders
// nothing.
func TestLastMugTakesNoStockAway(t *testing.T) {
	t.Parallel()
	h, _ := run(t, "last-mug")
	if _, err := h.DB.ReceiveStock(t.Context(), db.ReceiveStockParams{Sku: labMug, Quantity: 2}); err != nil {
		t.Fatal(err)
	}
	r, err := labOf(h).Run(t.Context(), "last-mug")
	if err != nil {
		t.Fatal(err)
	}
	if r.Error == "" || r.AsExpected || len(r.Attempts) != 0 {
		t.Errorf("got %+v, want a run that could not be carried out, with no attempt", r)
	}
	wantLabMugStock(t, h, 2, 3)
	h.WantStats(t, 1, 1)
}

// wantLabMugStock fails unless the lab's mug has onHand on hand and
// received in all, with on hand + reserved + sold = received.
func wantLabMugStock(t *testing.T, h *apptest.Harness, onHand, received int64) {
	t.Helper()
	gotOnHand := h.Count(t, `SELECT on_hand FROM stock WHERE sku = $1`, labMug)
	gotReceived := h.Count(t, `SELECT received FROM stock WHERE sku = $1`, labMug)
	held := h.Count(t, `SELECT count(*) FROM stock_reservations WHERE sku = $1 AND state IN ('reserved', 'sold')`, labMug)
	if gotOnHand != onHand || gotReceived != received || gotOnHand+held != gotReceived {
		t.Errorf("lab's mug: got %d on hand, %d received, %d reserved or sold; want %d on hand, %d received, adding up",
			gotOnHand, gotReceived, held, onHand, received)
	}
}

// wantCatalogSoldOut fails unless the shop's catalog lists the lab's mug
// as sold out, with no way to add it to a cart.
func wantCatalogSoldOut(t *testing.T, h *apptest.Harness) {
	t.Helper()
	resp := h.Do(t, "GET", "/", "")
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	p := doc.Find(`[data-testid=product][data-sku="` + labMug + `"]`)
	if p.Length() != 1 {
		t.Fatalf("the catalog lists the lab's mug %d times, want once", p.Length())
	}
	if got := strings.TrimSpace(p.Find("[data-testid=product-stock]").Text()); got != "Sold out" {
		t.Errorf("the catalog says %q of the lab's mug, want Sold out", got)
	}
	if _, disabled := p.Find(`form[data-testid=add-to-cart] button`).Attr("disabled"); !disabled {
		t.Error("the lab's mug can be added to a cart between runs")
	}
}

// wantBothShoppersNamed fails unless the card's result names both of the
// run's shoppers, each linked to the inspector, which shows either.
func wantBothShoppersNamed(t *testing.T, h *apptest.Harness, r lab.Run) {
	t.Helper()
	p := apptest.NewShopper(t, h).Get(t, "/lab")
	var got []string
	p.TestID("scenario-last-mug").Find(`[data-testid=result] [data-testid=shopper]`).Each(func(_ int, a *goquery.Selection) {
		id, _ := a.Attr("title")
		got = append(got, id)
	})
	if len(got) != 2 || got[0] != r.Shoppers[0].String() || got[1] != r.Shoppers[1].String() {
		t.Errorf("the card names shoppers %q, want the run's %v", got, r.Shoppers)
	}
	for _, id := range r.Shoppers {
		if _, err := labOf(h).Inspect(t.Context(), id, ""); err != nil {
			t.Errorf("inspect shopper %s: %v", id, err)
		}
	}
}

// TestLastMugWaitsForTheCatalog: the shop caches its catalog for a few
// seconds, so an order for the lab's mug right after the lab added it
// would be refused as an unknown product. The first run waits until the
// catalog lists it, before its time line starts.
func TestLastMugWaitsForTheCatalog(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	// The catalog is read, and cached, before the lab's mug exists.
	if resp := h.Do(t, "GET", "/api/products", ""); resp.Status != 200 || bytes.Contains(resp.Body, []byte(labMug)) {
		t.Fatalf("got %d %s before the run, want the catalog without the lab's mug", resp.Status, resp.Body)
	}
	r, err := labOf(h).Run(t.Context(), "last-mug")
	if err != nil || r.Error != "" || !r.AsExpected {
		t.Fatalf("got %v, %q, as expected %v, attempts %q", err, r.Error, r.AsExpected, outcomes(r))
	}
	// The wait is not on the time line: the orders go at its start.
	for _, a := range r.Attempts {
		if a.Start > time.Second {
			t.Errorf("attempt %d sent %v into the run, want at its start", a.N, a.Start)
		}
	}
	if resp := h.Do(t, "GET", "/api/products", ""); !bytes.Contains(resp.Body, []byte(labMug)) {
		t.Errorf("the catalog does not list the lab's mug after the run: %s", resp.Body)
	}
}
