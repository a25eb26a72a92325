package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/demo/lab/labdb"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
)

// The last-mug scenario's mug is the lab's own product, not the shop's
// espresso mug: stock is global in the shop's database, which the lab
// shares with the demo shop's real shoppers. Making the shop's mugs scarce
// for a run would refuse them, and putting back "what was there" after it
// cannot be done honestly (the run's sale is real, and a real shopper's
// order may land in between). The lab's mug keeps stock from the moment it
// exists, is listed in the catalog like every product, shows "Sold out"
// between runs, and each run receives one.
var labMug = catalog.Product{
	SKU: "lab-last-mug", Name: "Espresso mug, the lab's last one", Price: 1200, Currency: "eur",
	Description: "Kept for the double-click lab: one comes in at each run of “Two shoppers, one mug left”, and one of its two shoppers buys it.",
}

// lastMugBody is the order both shoppers send.
var lastMugBody = fmt.Sprintf(`{"items": [{"sku": %q, "quantity": 1}]}`, labMug.SKU)

// catalogWait bounds how long a run waits for the shop's catalog, which it
// caches for five seconds, to list the lab's mug the first time it is added.
const catalogWait = 10 * time.Second

// lastMugSteps has one lab mug on hand, lets the run's two shoppers order
// it at the same instant, each with a key of its own, and checks the
// story: one order; the other shopper refused "sold out" with no key, no
// reservation and no PaymentIntent; nothing left on hand.
// The mug was readied before the run began (oneLabMugLeft, the
// scenario's prepare).
func lastMugSteps(ctx context.Context, s *session) error {
	type order struct {
		shopper shopper
		key     string
		i       int
		resp    orderResponse
	}
	orders := make([]*order, len(s.shoppers))
	// Each attempt is recorded as sent before the barrier opens, so that
	// the lanes keep the shoppers' order; both are let go together.
	start := make(chan struct{})
	var wg sync.WaitGroup
	for n, sh := range s.shoppers {
		o := &order{shopper: sh, key: uuid.NewString()}
		o.i = s.rec.beginIn(shopperLane(sh), "order the last mug", o.key)
		orders[n] = o
		wg.Go(func() {
			<-start
			resp, err := s.r.api.placeOrder(ctx, o.shopper, o.key, lastMugBody, 0)
			s.rec.end(o.i, resp, err)
			if err == nil && resp.problem == problem.SoldOut.Slug {
				s.rec.markNow("sold out")
			}
			o.resp = resp
		})
	}
	close(start)
	wg.Wait()

	var won, refused []*order
	for _, o := range orders {
		switch {
		case o.resp.status == http.StatusCreated:
			won = append(won, o)
		case o.resp.status == http.StatusConflict && o.resp.problem == problem.SoldOut.Slug:
			refused = append(refused, o)
		}
	}
	if len(won) != 1 || len(refused) != len(orders)-1 {
		s.fail(fmt.Sprintf("%d of the %d shoppers got the mug and %d were told sold out; want one and the rest sold out",
			len(won), len(orders), len(refused)))
		return nil
	}
	if err := s.checkReservations(ctx, won[0].shopper, won[0].key); err != nil {
		return err
	}
	for _, o := range refused {
		if err := s.checkNothingStarted(ctx, o.shopper, o.key); err != nil {
			return err
		}
	}
	snap := s.rec.snapshot()
	winner, loser := snap[won[0].i], snap[refused[0].i]
	if loser.End < winner.End {
		s.note(fmt.Sprintf("shopper %s was told sold out at %s into the run, while shopper %s was still being charged (answered at %s)",
			ShortID(refused[0].shopper.ID.String()), loser.End.Round(time.Millisecond), ShortID(won[0].shopper.ID.String()), winner.End.Round(time.Millisecond)))
	}
	return s.checkLabMugStock(ctx)
}

// shopperLane names a lane after its shopper, as the run's summary does.
func shopperLane(sh shopper) string { return "Shopper " + ShortID(sh.ID.String()) }

// oneLabMugLeft adds the lab's mug to the shop if it is not there yet, and
// receives what brings it to exactly one on hand. It runs before the run's
// time line starts: the first run may wait seconds for the shop's catalog.
func oneLabMugLeft(ctx context.Context, r *Runner) error {
	added, err := r.q.AddLabMug(ctx, labdb.AddLabMugParams{Sku: labMug.SKU, Name: labMug.Name, Price: labMug.Price,
		Currency: labMug.Currency, Description: labMug.Description})
	if err != nil {
		return fmt.Errorf("add the lab's mug: %w", err)
	}
	if added {
		if err := r.waitCatalogLists(ctx, labMug.SKU); err != nil {
			return err
		}
	}
	left, err := r.q.RestockLabMug(ctx, labMug.SKU)
	if err != nil {
		return fmt.Errorf("receive the lab's mug: %w", err)
	}
	if left != 1 {
		return fmt.Errorf("the lab's mug (%s) has %d on hand, not one: someone received more (web stock); the lab takes no stock away", labMug.SKU, left)
	}
	return nil
}

// waitCatalogLists waits until the shop's catalog (GET /api/products),
// which the order's pricing reads too, lists sku.
func (r *Runner) waitCatalogLists(ctx context.Context, sku string) error {
	deadline := time.Now().Add(catalogWait)
	for {
		resp, err := r.api.do(ctx, http.MethodGet, "/api/products", nil, nil)
		if err != nil {
			return fmt.Errorf("read the catalog: %w", err)
		}
		var products []catalog.Product
		if err := json.Unmarshal(resp.body, &products); err != nil {
			return fmt.Errorf("read the catalog: got %d, %w", resp.status, err)
		}
		if slices.ContainsFunc(products, func(p catalog.Product) bool { return p.SKU == sku }) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the shop's catalog does not list %s after %s", sku, catalogWait)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// checkReservations reads what the run's shoppers reserved of the lab's
// mug: one reservation, the winner's key's, now sold. Its instant, the
// claim's by the database clock, is marked on the timeline.
func (s *session) checkReservations(ctx context.Context, winner shopper, key string) error {
	rows, err := s.r.q.LabMugOf(ctx, labdb.LabMugOfParams{Sku: labMug.SKU, CustomerIds: s.shopperIDs()})
	if err != nil {
		return fmt.Errorf("read the lab mug's reservations: %w", err)
	}
	if len(rows) != 1 || rows[0].CustomerID != winner.ID || rows[0].Key != key {
		s.fail(fmt.Sprintf("the run's shoppers hold %d reservations of the mug; want one, the order's", len(rows)))
		return nil
	}
	r := rows[0]
	s.rec.markAt("mug reserved", r.ReservedAt)
	if r.State != "sold" {
		s.fail(fmt.Sprintf("the order's reservation is %s, not sold", r.State))
	}
	return nil
}

// checkNothingStarted checks that a shopper told "sold out" has nothing
// the refused claim would have written: no key, and no PaymentIntent at
// the provider.
func (s *session) checkNothingStarted(ctx context.Context, sh shopper, key string) error {
	_, err := s.r.db.GetKey(ctx, db.GetKeyParams{CustomerID: sh.ID, Key: key})
	switch {
	case err == nil:
		s.fail(fmt.Sprintf("shopper %s was told sold out, but their key was claimed", ShortID(sh.ID.String())))
	case !errors.Is(err, database.ErrNotFound):
		return fmt.Errorf("get key: %w", err)
	}
	intents, err := s.r.faults.IntentsByMetadata(ctx, map[string]string{"customer_id": sh.ID.String()})
	if err != nil {
		return fmt.Errorf("provider intents: %w", err)
	}
	s.fact("told sold out", fmt.Sprintf("no key, %s", countNoun(int64(len(intents)), "intent")))
	if len(intents) != 0 {
		s.fail(fmt.Sprintf("shopper %s was told sold out, but the provider holds %d PaymentIntents of theirs", ShortID(sh.ID.String()), len(intents)))
	}
	return nil
}

// checkLabMugStock checks the lab mug's stock after the run: none on hand,
// and on hand + reserved + sold = received.
func (s *session) checkLabMugStock(ctx context.Context) error {
	st, err := s.r.q.LabMugStock(ctx, labMug.SKU)
	if err != nil {
		return fmt.Errorf("read the lab mug's stock: %w", database.Translate(err))
	}
	s.fact("left", fmt.Sprint(st.OnHand))
	if st.OnHand != 0 || st.OnHand+st.Reserved+st.Sold != st.Received {
		s.fail(fmt.Sprintf("the lab's mug: %d on hand, %d reserved, %d sold, %d received; want none on hand and the four adding up",
			st.OnHand, st.Reserved, st.Sold, st.Received))
	}
	return nil
}
