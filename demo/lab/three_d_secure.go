package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/demo/lab/labdb"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/stripehook"
)

// The 3-D Secure scenarios go the way a shopper's browser goes: the shop's
// checkout page, the bank's page (the fake Stripe's), and the shop's return
// route, which only the pages have (see browser). Their shopper is a
// browser's, with a mug in its cart.

// The cards the scenarios type into the pay form: Stripe's test card whose
// bank always asks for 3-D Secure, and one that is simply charged.
const (
	authenticationCard = "4000002760003184"
	plainCard          = "4242424242424242"
)

// settleWait bounds how long a scenario waits for the webhook to settle an
// order.
const settleWait = 10 * time.Second

// newBrowserShopper opens a browser on the shop and puts an espresso mug in
// its cart, which makes it a shopper, and learns the shopper's id from the
// cart its checkout page shows.
func (r *Runner) newBrowserShopper(ctx context.Context) (*browser, shopper, error) {
	b, err := newBrowser(r.api.baseURL, r.api.http.Transport)
	if err != nil {
		return nil, shopper{}, err
	}
	shop, err := b.get(ctx, "/")
	if err != nil {
		return nil, shopper{}, fmt.Errorf("open the shop: %w", err)
	}
	add, ok := formValues(shop.find(`[data-testid=product][data-sku="mug-espresso"] form[data-testid=add-to-cart]`))
	if !ok {
		return nil, shopper{}, errors.New("the shop shows no add-to-cart form for mug-espresso")
	}
	if p, err := b.post(ctx, "/cart", add); err != nil || p.status != http.StatusSeeOther {
		return nil, shopper{}, fmt.Errorf("add a mug to the cart: got %d, %v", p.status, err)
	}
	form, err := b.checkoutForm(ctx, plainCard)
	if err != nil {
		return nil, shopper{}, err
	}
	cart, err := uuid.Parse(form.Get("cart_id"))
	if err != nil {
		return nil, shopper{}, fmt.Errorf("the checkout form's cart: %w", err)
	}
	id, err := r.q.CartCustomer(ctx, cart)
	if err != nil {
		return nil, shopper{}, fmt.Errorf("the cart's shopper: %w", database.Translate(err))
	}
	return b, shopper{ID: id}, nil
}

// checkoutForm opens the checkout page and fills its pay form with card.
func (b *browser) checkoutForm(ctx context.Context, card string) (url.Values, error) {
	p, err := b.get(ctx, "/checkout")
	if err != nil {
		return nil, fmt.Errorf("open the checkout: %w", err)
	}
	form, ok := p.form("checkout-form")
	if !ok {
		return nil, fmt.Errorf("the checkout page (%d) has no pay form", p.status)
	}
	form.Set("card", card)
	return form, nil
}

// visit records one step of the browser under label and key: send's
// answer, and, with follow, the page the browser lands on after its
// redirects and refreshes.
func (s *session) visit(ctx context.Context, label, key string, follow bool, send func() (page, error)) (page, error) {
	i := s.rec.begin(label, key)
	first, err := send()
	landed, waited := first, false
	if err == nil && follow {
		landed, waited, err = s.browser.land(ctx, first)
	}
	s.rec.endPage(i, first, landed, waited, err)
	if err != nil {
		return page{}, fmt.Errorf("%s: %w", label, err)
	}
	return landed, nil
}

// toBank pays the cart with the card that asks for 3-D Secure and returns
// the form sent (its key) and the bank's page the shop sent the shopper to.
func (s *session) toBank(ctx context.Context) (url.Values, string, error) {
	form, err := s.browser.checkoutForm(ctx, authenticationCard)
	if err != nil {
		return nil, "", err
	}
	key := form.Get(formKey)
	p, err := s.visit(ctx, "pay, card …3184", key, true, func() (page, error) { return s.browser.post(ctx, "/checkout", form) })
	if err != nil {
		return nil, "", err
	}
	bank := p.bankURL()
	if bank == "" {
		return nil, "", fmt.Errorf("the checkout did not send the shopper to the bank: it showed %q", p.shown())
	}
	return form, bank, nil
}

// formKey is the pay form's Idempotency-Key field.
const formKey = "idempotency_key"

// atBank sends the bank's page the shopper's click (outcome complete or
// fail), recorded under label; with follow, the browser goes back to the
// shop as the bank sends it.
func (s *session) atBank(ctx context.Context, label, key, bank, outcome string, follow bool) (page, error) {
	return s.visit(ctx, label, key, follow, func() (page, error) {
		return s.browser.post(ctx, bank, url.Values{"outcome": {outcome}})
	})
}

// back follows the way back to the shop (the bank's redirect) under label.
func (s *session) back(ctx context.Context, label, key, returnURL string) (page, error) {
	return s.visit(ctx, label, key, true, func() (page, error) { return s.browser.get(ctx, returnURL) })
}

// wantReceipt fails the run unless p is a receipt, and returns its order.
func (s *session) wantReceipt(what string, p page) string {
	if p.shown() != shownReceipt || p.orderID() == "" {
		s.fail(fmt.Sprintf("%s showed %q, not the receipt", what, p.shown()))
		return ""
	}
	return p.orderID()
}

// bankDoubleClickSteps: the order needs 3-D Secure; at the bank, which is
// slow to answer, the shopper clicks Complete twice, 50 ms apart; the
// browser follows the second click's answer back to the shop.
func bankDoubleClickSteps(ctx context.Context, s *session) error {
	form, bank, err := s.toBank(ctx)
	if err != nil {
		return err
	}
	key := form.Get(formKey)
	var (
		wg     sync.WaitGroup
		clicks [2]page
		errs   [2]error
	)
	wg.Go(func() {
		clicks[0], errs[0] = s.atBank(ctx, "Complete at the bank, click 1", key, bank, "complete", false)
	})
	if err := sleep(ctx, 50*time.Millisecond); err != nil {
		return err
	}
	wg.Go(func() {
		clicks[1], errs[1] = s.atBank(ctx, "Complete at the bank, click 2", key, bank, "complete", false)
	})
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	if clicks[0].location == "" || clicks[0].location != clicks[1].location {
		s.fail(fmt.Sprintf("the two clicks were sent back to %q and %q, not to one return", clicks[0].location, clicks[1].location))
		return nil
	}
	s.note("the bank decided the first click; the second changed nothing and was sent back the same way")
	receipt, err := s.back(ctx, "back to the shop", key, clicks[1].location)
	if err != nil {
		return err
	}
	if order := s.wantReceipt("the way back", receipt); order != "" {
		s.fact("settled by", "the return")
	}
	return nil
}

// returnRefreshSteps: the order needs 3-D Secure, the shopper completes it,
// comes back, then refreshes the return page while another tab opens it.
func returnRefreshSteps(ctx context.Context, s *session) error {
	form, bank, err := s.toBank(ctx)
	if err != nil {
		return err
	}
	key := form.Get(formKey)
	click, err := s.atBank(ctx, "Complete at the bank", key, bank, "complete", false)
	if err != nil {
		return err
	}
	if click.location == "" {
		s.fail(fmt.Sprintf("the bank answered %d, not a way back to the shop", click.status))
		return nil
	}
	first, err := s.back(ctx, "back to the shop", key, click.location)
	if err != nil {
		return err
	}
	order := s.wantReceipt("the way back", first)
	var (
		wg    sync.WaitGroup
		again [2]page
		errs  [2]error
	)
	for i, label := range []string{"refresh", "another tab"} {
		wg.Go(func() { again[i], errs[i] = s.back(ctx, label, key, click.location) })
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	one := order != ""
	for i, label := range []string{"the refresh", "the other tab"} {
		if got := s.wantReceipt(label, again[i]); got != order {
			one = false
			if got != "" && order != "" {
				s.fail(fmt.Sprintf("%s showed order %s, not %s", label, got, order))
			}
		}
	}
	if one {
		s.note("the return, its refresh and the other tab showed one order, " + ShortID(order))
		s.fact("settled by", "the first return")
	}
	return nil
}

// webhookBeforeReturnSteps: the shopper completes at the bank, and their
// way back is slow: the lab holds it until the provider's webhook has
// settled the order, then lets it arrive.
func webhookBeforeReturnSteps(ctx context.Context, s *session) error {
	form, bank, err := s.toBank(ctx)
	if err != nil {
		return err
	}
	key := form.Get(formKey)
	click, err := s.atBank(ctx, "Complete at the bank", key, bank, "complete", false)
	if err != nil {
		return err
	}
	if click.location == "" {
		s.fail(fmt.Sprintf("the bank answered %d, not a way back to the shop", click.status))
		return nil
	}
	held := time.Now()
	settled, err := s.waitKeyFinished(ctx, key, settleWait)
	if err != nil {
		return err
	}
	if !settled {
		s.fail(fmt.Sprintf("no webhook settled the order within %s (does the fake deliver webhooks to the shop?)", settleWait))
	} else {
		s.note(fmt.Sprintf("the shopper's return was held %s, until the webhook had settled the order",
			time.Since(held).Round(time.Millisecond)))
	}
	receipt, err := s.back(ctx, "back to the shop", key, click.location)
	if err != nil {
		return err
	}
	s.wantReceipt("the way back", receipt)
	return s.checkWebhookSettled(ctx, bankPageIntent(bank))
}

// waitKeyFinished waits, up to limit, until key is finished, and reports
// whether it is.
func (s *session) waitKeyFinished(ctx context.Context, key string, limit time.Duration) (bool, error) {
	deadline := time.Now().Add(limit)
	for {
		k, err := s.r.db.GetKey(ctx, db.GetKeyParams{CustomerID: s.shopper.ID, Key: key})
		switch {
		case err != nil && !errors.Is(err, database.ErrNotFound):
			return false, fmt.Errorf("get key: %w", err)
		case err == nil && k.Status == "finished":
			return true, nil
		case time.Now().After(deadline):
			return false, nil
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return false, err
		}
	}
}

// checkWebhookSettled reads the shop's webhook inbox: the intent's
// payment_intent.succeeded must have found its key still waiting
// (pending), and the order must have been written after it.
func (s *session) checkWebhookSettled(ctx context.Context, intent string) error {
	events, err := s.r.q.CustomerStripeEvents(ctx, s.shopper.ID)
	if err != nil {
		return fmt.Errorf("read the webhook inbox: %w", err)
	}
	for _, ev := range events {
		if ev.Type != "payment_intent.succeeded" || ev.PaymentIntentID != intent {
			continue
		}
		switch {
		case ev.Effect != stripehook.EffectPending:
			s.fail(fmt.Sprintf("the webhook's effect was %q, not %q: it did not find the key waiting for the shopper", ev.Effect, stripehook.EffectPending))
		case ev.OrderWrittenAt == nil:
			s.fail("no order holds the charge the webhook told of")
		case ev.OrderWrittenAt.Before(ev.ReceivedAt):
			s.fail("the order was written before the webhook came")
		default:
			s.fact("settled by", "the webhook")
		}
		return nil
	}
	s.fail("the shop's webhook inbox holds no payment_intent.succeeded for the order's payment")
	return nil
}

// abandonSteps: the shopper is sent to their bank and leaves; past the
// authentication window they pay again, then find the bank's tab and
// click Complete, then start a new checkout with another card.
func abandonSteps(ctx context.Context, s *session) error {
	form, bank, err := s.toBank(ctx)
	if err != nil {
		return err
	}
	key := form.Get(formKey)
	window := s.r.limits.AuthenticationWindow
	if window <= 0 {
		window = checkout.DefaultAuthenticationWindow
	}
	aged, err := s.r.q.AgeAuthenticationWait(ctx, labdb.AgeAuthenticationWaitParams{
		Seconds: (window + time.Second).Seconds(), CustomerID: s.shopper.ID, Key: key})
	if err != nil {
		return fmt.Errorf("age the wait for the bank: %w", err)
	}
	if aged != 1 {
		return fmt.Errorf("age the wait for the bank: %d keys wait, want 1", aged)
	}
	s.note(fmt.Sprintf("the shopper left the bank's page; the lab moved the start of their wait back by AUTHENTICATION_WINDOW (%s) instead of waiting it out", window))

	again, err := s.visit(ctx, "pay again, same form", key, true, func() (page, error) { return s.browser.post(ctx, "/checkout", form) })
	if err != nil {
		return err
	}
	if again.shown() != shownNotComplete {
		s.fail(fmt.Sprintf("paying again past the window showed %q, not %q", again.shown(), shownNotComplete))
	}
	late, err := s.atBank(ctx, "Complete at the bank, late", key, bank, "complete", true)
	if err != nil {
		return err
	}
	if late.shown() != shownNotComplete {
		s.fail(fmt.Sprintf("completing at the bank after the cancel showed %q, not %q", late.shown(), shownNotComplete))
	}

	fresh, err := s.browser.checkoutForm(ctx, plainCard)
	if err != nil {
		return err
	}
	if fresh.Get(formKey) == key {
		s.fail("the new checkout carries the abandoned key")
	}
	paid, err := s.visit(ctx, "new checkout, card …4242", fresh.Get(formKey), true,
		func() (page, error) { return s.browser.post(ctx, "/checkout", fresh) })
	if err != nil {
		return err
	}
	s.wantReceipt("the new checkout", paid)
	return s.checkFirstIntent(ctx, bankPageIntent(bank))
}

// checkFirstIntent reads the abandoned payment at the provider: it must be
// canceled, never charged.
func (s *session) checkFirstIntent(ctx context.Context, id string) error {
	intents, err := s.r.faults.IntentsByMetadata(ctx, map[string]string{"customer_id": s.shopper.ID.String()})
	if err != nil {
		return fmt.Errorf("provider intents: %w", err)
	}
	for _, in := range intents {
		if in.ID != id {
			continue
		}
		s.fact("first payment", in.Status)
		if in.Status != "canceled" {
			s.fail(fmt.Sprintf("the abandoned payment %s is %s, not canceled", in.ID, in.Status))
		}
		return nil
	}
	return fmt.Errorf("the provider has no intent %s", id)
}

// bankPageIntent is the PaymentIntent a bank's page is for: the last
// segment of its path.
func bankPageIntent(bank string) string {
	u, err := url.Parse(bank)
	if err != nil {
		return ""
	}
	return path.Base(u.Path)
}
