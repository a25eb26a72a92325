package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// answer is what an order from the pay form ends on, decided from the
// engine's answer before anything is written: a 303 to where the order is
// (post/redirect/get), or a page with its status. Deciding first and
// writing in one place (send) keeps the submit and the status page from
// answering one outcome two ways.
type answer struct {
	status int
	// location, when set, is where a 303 sends the browser.
	location string
	// replayed marks an answer stored by an earlier request (the header
	// the API sends too, Idempotent-Replayed): the write limits spend
	// nothing on it, and count a 402 without it as a fresh decline.
	replayed bool
	// retryAfter, in seconds, is sent as Retry-After when not zero.
	retryAfter int
	// form is the pay form shown again, priced; page is any other page.
	form *shownForm
	page views.OrderAnswer
}

// shownForm is the pay form as the checkout page shows it: its lines priced,
// and cartChanged when it replaces a form for an older version of the cart.
type shownForm struct {
	priced      catalog.Priced
	form        views.CheckoutForm
	cartChanged bool
	// items is the cart the form is for, when it was read: its count is
	// on the page's Cart link.
	items []catalog.Item
}

// answerOf decides the answer to an attempt of the pay form. retry is that
// form again, with the same key. It does not classify errors (the error
// table, web.Classify, does): it picks, for the few outcomes the pay form
// answers with a page of its own, what that page needs (the form again, a
// fresh form, the receipt, the processing page), and sends every other
// error to the error handler, which answers it from the table.
func (h *Handler) answerOf(ctx context.Context, id uuid.UUID, retry views.CheckoutForm, res checkout.Result, err error) (answer, error) {
	var (
		invalid *checkout.InvalidOrderError
		ordered *checkout.CartOrderedError
		changed *checkout.CartChangedError
		authn   *checkout.AuthenticationRequiredError
	)
	if err == nil {
		a, err := resultAnswer(res)
		if err != nil {
			return answer{}, err
		}
		return h.declinedInForm(ctx, id, retry.CSRF, a)
	}
	f := web.Classify(err)
	switch {
	case errors.As(err, &authn):
		// The bank asks the shopper to authenticate the payment (3-D
		// Secure): to its page, which sends them back to /checkout/return.
		// A second submit of the form meanwhile is sent there too.
		return answer{status: http.StatusOK, page: views.OrderAnswer{Authenticate: &views.AuthenticatePage{URL: authn.URL}}}, nil
	case f.Kind == problem.KeyInUse || f.Kind == problem.LockLost:
		// Still running when the engine stopped waiting for it: the
		// processing page waits on, without holding a request open.
		return processingAnswer(retry.Key, nil), nil
	case errors.As(err, &invalid) && invalid.Card:
		// Nothing was claimed: the same form, with the same key, once the
		// number is corrected.
		retry.CardError = "Enter a card number of 12 to 19 digits, such as one of the test cards."
		if invalid.CheckDigit {
			retry.CardError = "This card number has a typo: one of its digits is wrong. Check it against your card, or pick a test card."
		}
		return answer{status: http.StatusBadRequest, form: &shownForm{priced: invalid.Priced, form: retry}}, nil
	case errors.As(err, &ordered):
		// The cart was ordered under another key (a form of an older
		// render): that order is this form's answer.
		return answer{location: "/orders/" + ordered.OrderID.String() + "?replayed=1"}, nil
	case errors.As(err, &changed):
		return h.cartChanged(ctx, id, retry, changed)
	case resumable[f.Kind]:
		// The payment's outcome is not known (the provider failed, or the
		// server is stopping): the same form again resumes it.
		wait := web.RetryAfterSeconds(f.RetryAfter)
		return answer{status: f.Kind.Status, retryAfter: wait,
			page: views.OrderAnswer{Outage: &views.OutagePage{RetryAfterSeconds: wait, Retry: retry, StatusURL: statusURL(retry.Key)}}}, nil
	}
	return answer{}, err
}

// resumable are the rows of the table whose payment the same form, sent
// again, resumes: its page offers that form rather than a way out.
var resumable = map[problem.Kind]bool{
	problem.OutcomeUnknown: true, problem.ProviderTimeout: true, problem.ProviderUnavailable: true, problem.ShuttingDown: true,
}

// resultAnswer answers a stored outcome: a placed order with 303 to its
// receipt, a declined payment with its page.
//
// A result Joined (this request waited for the attempt that placed it, as
// the second submit of a double-click does) is one the shopper asked for
// once, so the receipt carries no "already placed" note.
func resultAnswer(res checkout.Result) (answer, error) {
	note := res.Replayed && !res.Joined
	switch res.Status {
	case http.StatusCreated:
		var placed struct {
			OrderID uuid.UUID `json:"order_id"`
		}
		if err := json.Unmarshal(res.Body, &placed); err != nil {
			return answer{}, fmt.Errorf("decode stored receipt: %w", err)
		}
		a := answer{location: "/orders/" + placed.OrderID.String(), replayed: res.Replayed}
		if note {
			a.location += "?replayed=1"
		}
		return a, nil
	case http.StatusPaymentRequired:
		// A declined card, or an operation the server closed without a
		// charge. Both are final for the key; a new checkout, with a new
		// key, is the way to try again.
		var p problem.Problem
		if err := json.Unmarshal(res.Body, &p); err != nil {
			return answer{}, fmt.Errorf("decode stored problem: %w", err)
		}
		page := views.DeclinedPage{Title: "Payment declined", Message: p.Detail,
			Replayed: note, Again: "Try again with another card"}
		if p.Type != "/problems/"+problem.PaymentDeclined.Slug {
			page.Title = "Payment not completed"
			page.Message = "The payment stopped before your card was charged, and it cannot be resumed."
			page.Again = "Start a new checkout"
		}
		return answer{status: res.Status, replayed: res.Replayed, page: views.OrderAnswer{Declined: &page}}, nil
	}
	return answer{}, fmt.Errorf("stored result with unexpected status %d", res.Status)
}

// cartChanged answers a form for a version of the cart that is no longer
// its own: nothing was charged, and the page shows the cart as it is now,
// as the engine read and priced it when it refused the form, with a fresh
// form (its version's key, kept with the cart).
func (h *Handler) cartChanged(ctx context.Context, id uuid.UUID, sent views.CheckoutForm, changed *checkout.CartChangedError) (answer, error) {
	if changed.Priced == nil {
		return answer{}, cartChangedAway(changed)
	}
	minted, err := h.formKeys.Mint()
	if err != nil {
		return answer{}, err
	}
	key, ok, err := h.carts.KeepCheckoutKey(ctx, id, changed.Now.ID, changed.Now.Version, minted, h.formKeys.TTL()/2)
	if err != nil {
		return answer{}, err
	}
	if !ok {
		return answer{}, cartChangedAway(changed)
	}
	shown := h.payForm(id, sent.CSRF, key, changed.Now.ID, changed.Now.Version, changed.Items, *changed.Priced)
	shown.cartChanged = true
	// The card typed into the refused form, in this answer only.
	shown.form.Card = sent.Card
	return answer{status: http.StatusConflict, form: &shown}, nil
}

// declinedInForm shows a declined payment where the shopper paid: under
// the card field of the checkout form, with the order summary, as the big
// payment pages do. The declined key is final (a resubmit replays the
// decline), and the decline released the cart from it (a new version,
// no key), so the form is a fresh one with a new key. The card is not
// echoed: it was refused, and the field asks for another. With no cart
// to show (emptied or ordered meanwhile), the declined page stays.
func (h *Handler) declinedInForm(ctx context.Context, id uuid.UUID, csrf string, a answer) (answer, error) {
	d := a.page.Declined
	if d == nil {
		return a, nil
	}
	shown, ok, err := h.freshCheckout(ctx, id, csrf)
	if err != nil || !ok {
		return a, err
	}
	shown.form.Declined = &views.Decline{Title: d.Title, Message: d.Message, Replayed: d.Replayed, Again: d.Again}
	a.page.Declined = nil
	a.form = &shown
	return a, nil
}

// cartChangedAway is the answer to a form whose cart changed when there is
// no current form to show instead: the cart is empty now, cannot be priced,
// or changed once more while the refusal was answered. The cart page shows
// it as it is.
func cartChangedAway(changed *checkout.CartChangedError) error {
	message := "Your cart changed since this checkout page was opened, so nothing was charged. Check it and order again."
	if len(changed.Items) == 0 {
		message = "Your cart changed since this checkout page was opened, and it is empty now, so nothing was charged."
	}
	return &web.PageError{Status: http.StatusConflict, Title: "Your cart changed", Message: message,
		Action: web.BackToCart, Err: changed}
}

// processingAnswer is the page of an order still running. It reloads
// /checkout/status by meta refresh, with no script; with retry, the order
// is one nobody works on any more, and the page offers to resume it.
func processingAnswer(key string, retry *views.CheckoutForm) answer {
	return answer{status: http.StatusAccepted, page: views.OrderAnswer{Processing: &views.ProcessingPage{
		StatusURL:      statusURL(key),
		RefreshSeconds: 1,
		Retry:          retry,
	}}}
}

// statusURL is the status page of the order under key.
func statusURL(key string) string {
	return "/checkout/status?key=" + url.QueryEscape(key)
}

// send writes a, with the cart's count on its page: the form's cart
// when it shows one, the shopper's cart as it is now otherwise.
func (h *Handler) send(c echo.Context, a answer) error {
	header := c.Response().Header()
	if a.replayed {
		header.Set(idem.HeaderReplayed, "true")
	}
	if a.retryAfter > 0 {
		header.Set("Retry-After", strconv.Itoa(a.retryAfter))
	}
	if a.location != "" {
		return c.Redirect(http.StatusSeeOther, a.location)
	}
	if a.page.Outage != nil {
		// Its retry form holds the card number just sent.
		header.Set(echo.HeaderCacheControl, "no-store")
	}
	if a.form != nil && a.form.items != nil {
		countCart(c, a.form.items)
	} else if err := h.readCartCount(c); err != nil {
		return err
	}
	page := a.page
	if a.form != nil {
		// A form of one render, with its key and signature, and maybe the
		// card number just sent: a page not to keep.
		header.Set(echo.HeaderCacheControl, "no-store")
		p := checkoutView(a.form.priced, a.form.form)
		p.CartChanged = a.form.cartChanged
		page.Checkout = &p
	}
	return web.Render(c, a.status, views.Answer(page))
}

// payForm is the pay form for a cart version whose lines are priced, under
// key, signed for the shopper and for exactly what it shows.
func (h *Handler) payForm(id uuid.UUID, csrf, key string, cartID uuid.UUID, version int64, items []catalog.Item, priced catalog.Priced) shownForm {
	b := formkey.Binding{CartID: cartID, CartVersion: version, Items: items, Amount: priced.Amount}
	form := views.CheckoutForm{
		CSRF: csrf, Key: key, KeySig: h.formKeys.Sign(id, key, b),
		CartID: cartID.String(), CartVersion: version, Items: formItems(items), Amount: priced.Amount,
	}
	return shownForm{priced: priced, form: form, items: items}
}

// checkoutView is the checkout page of a form whose lines are priced.
func checkoutView(priced catalog.Priced, form views.CheckoutForm) views.CheckoutPage {
	return views.CheckoutPage{
		Lines: viewLines(priced.Lines, priced.Currency),
		Total: views.Money{Minor: priced.Amount, Currency: priced.Currency},
		Form:  form,
		Cards: testCards,
	}
}

// testCards are shown on the checkout page: the fake provider's card that
// succeeds, the one it always declines, and the one whose bank asks the
// shopper to confirm (3-D Secure).
var testCards = []views.TestCard{
	{Number: groupDigits(payment.SucceedingCard), Outcome: "succeeds", Succeeds: true},
	{Number: groupDigits(payment.DeclinedCard), Outcome: "is declined"},
	{Number: groupDigits(payment.AuthenticationCard), Outcome: "asks your bank to confirm"},
}

// groupDigits writes a card number in groups of four, as printed on cards.
func groupDigits(n string) string {
	var b strings.Builder
	for i, r := range n {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
