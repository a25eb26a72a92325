package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// checkoutRoute is fingerprinted with every browser order. Keys are scoped
// per shopper as API keys are per token, and the route in the fingerprint
// keeps one from ever answering for the other.
const checkoutRoute = "/checkout"

// submission is a pay form as posted: the key minted with the form, the
// snapshot of the cart it showed, the amount it showed, and the card.
type submission struct {
	key     string
	sig     string
	cartID  uuid.UUID
	version int64
	items   []catalog.Item
	amount  int64
	// card is the number as typed with spaces and dashes taken out; it is
	// checked by the engine, not here, so that a typo can be answered with
	// the same form.
	card string
	// typed is the card number as the shopper typed it, for the answers
	// that show the form again (retryForm). It is never logged nor stored.
	typed string
}

// maxEchoedCard bounds the card number echoed back into a form: a number
// as typed with spaces fits (the field's pattern allows 23 characters);
// anything longer is not a card, and is not echoed.
const maxEchoedCard = 32

var malformedForm = &web.PageError{Status: http.StatusBadRequest, Title: "Form incomplete",
	Message: "This checkout form arrived incomplete or altered, so nothing was charged. Start a new checkout from your cart.",
	Action:  web.NewCheckout}

// readSubmission reads a pay form. The amount is read only to be compared
// with the catalog's: what is charged is always computed on the server, and
// the form's amount is the shopper's agreement to it.
func readSubmission(c echo.Context) (submission, error) {
	form, err := c.FormParams()
	if err != nil {
		return submission{}, malformedForm
	}
	return parseSubmission(form)
}

// checkFormKey refuses a key this server did not mint for this shopper, or
// minted too long ago for its stored answer to be trusted to still exist.
func (h *Handler) checkFormKey(id uuid.UUID, sub submission) error {
	err := h.formKeys.Check(id, sub.key, sub.sig, sub.binding(), time.Now())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, formkey.ErrMissing):
		return &web.PageError{Status: http.StatusBadRequest, Title: "Form incomplete",
			Message: "This checkout form arrived without its order key, so nothing was charged. Start a new checkout.",
			Action:  web.NewCheckout, Err: err}
	case errors.Is(err, formkey.ErrExpired):
		return &web.PageError{Status: http.StatusBadRequest, Title: "This checkout form has expired",
			Message: fmt.Sprintf("Checkout forms are valid for %s, so this one was refused and nothing was charged. If you paid with it earlier, your order is in your orders.", h.formKeys.TTL()),
			Action:  views.Link{Href: "/orders", Label: "See your orders"}, Err: err}
	default:
		return &web.PageError{Status: http.StatusForbidden, Title: "This form cannot be used",
			Message: "This checkout form was not made for your session (for instance, it comes from another browser), or its order or total was changed after it was shown. Nothing was charged.",
			Action:  web.NewCheckout, Err: err}
	}
}

// formKeyField is the pay form's field that carries its idempotency key.
const formKeyField = "idempotency_key"

// parseSubmission reads a pay form's fields. It checks their shape only;
// whether they are the form this server rendered is the signature's to say
// (checkFormKey).
func parseSubmission(form url.Values) (submission, error) {
	var err error
	s := submission{
		key:  strings.TrimSpace(form.Get(formKeyField)),
		sig:  form.Get("key_sig"),
		card: strings.NewReplacer(" ", "", "-", "").Replace(form.Get("card")),
	}
	if typed := strings.TrimSpace(form.Get("card")); len(typed) <= maxEchoedCard {
		s.typed = typed
	}
	if s.cartID, err = uuid.Parse(form.Get("cart_id")); err != nil {
		return submission{}, malformedForm
	}
	if s.version, err = strconv.ParseInt(form.Get("cart_version"), 10, 64); err != nil {
		return submission{}, malformedForm
	}
	skus, quantities := form["sku"], form["quantity"]
	if len(skus) == 0 || len(skus) != len(quantities) || len(skus) > catalog.MaxLines {
		return submission{}, malformedForm
	}
	for i, sku := range skus {
		q, err := strconv.Atoi(quantities[i])
		if err != nil {
			return submission{}, malformedForm
		}
		s.items = append(s.items, catalog.Item{SKU: sku, Quantity: q})
	}
	if s.amount, err = strconv.ParseInt(form.Get("amount"), 10, 64); err != nil {
		return submission{}, malformedForm
	}
	return s, nil
}

// binding is what the form's signature must cover: the cart version, the
// lines as shown and the amount shown.
func (s submission) binding() formkey.Binding {
	return formkey.Binding{CartID: s.cartID, CartVersion: s.version, Items: s.items, Amount: s.amount}
}

// plausibleCard reports whether the card number can be one (the engine's
// rule, checkout.NormalizeCard); the provider has the last word.
func (s submission) plausibleCard() bool {
	_, ok := checkout.NormalizeCard(s.card)
	return ok
}

// last4 is the end of the card number; a shorter one is returned whole
// rather than panic.
func (s submission) last4() string { return s.card[max(0, len(s.card)-4):] }

// fingerprint identifies the order the form asks for: its lines, the amount
// it showed and the card's last four digits. Not the whole card number: a
// digest of one is as good as the number (so few digits are guessed from it),
// so it must not be stored. A form changed after its key was first used
// gets another fingerprint, and the engine refuses it (ErrKeyReused).
func (s submission) fingerprint() ([]byte, error) {
	items := slices.Clone(s.items)
	slices.SortStableFunc(items, func(a, b catalog.Item) int { return strings.Compare(a.SKU, b.SKU) })
	body, err := json.Marshal(struct {
		Items     []catalog.Item `json:"items"`
		Amount    int64          `json:"amount"`
		CardLast4 string         `json:"card_last4"`
	}{items, s.amount, s.last4()})
	if err != nil {
		return nil, fmt.Errorf("encode order: %w", err)
	}
	return checkout.Fingerprint(http.MethodPost, checkoutRoute, idem.NormalizeJSON(body)), nil
}

// attempt is the order the form asks for, by shopper id.
func (s submission) attempt(id uuid.UUID) (checkout.Attempt, error) {
	fp, err := s.fingerprint()
	if err != nil {
		return checkout.Attempt{}, err
	}
	return checkout.Attempt{
		CustomerID: id, Key: s.key, Fingerprint: fp,
		Order:          checkout.Order{Items: s.items, Card: s.card},
		Cart:           &checkout.CartVersion{ID: s.cartID, Version: s.version},
		ExpectedAmount: s.amount,
	}, nil
}

// retryForm is the pay form again, with the same key, snapshot and amount:
// sending it continues the same order. The card comes back as typed, in
// this one answer only (see views.CheckoutForm.Card), and the shopper is
// reminded which one it was.
func (s submission) retryForm(csrf string) views.CheckoutForm {
	f := views.CheckoutForm{CSRF: csrf, Key: s.key, KeySig: s.sig, CartID: s.cartID.String(), CartVersion: s.version,
		Amount: s.amount, Items: formItems(s.items), Card: s.typed}
	if s.plausibleCard() {
		f.CardHint = "ending in " + s.last4()
	}
	return f
}

func formItems(items []catalog.Item) []views.FormItem {
	out := make([]views.FormItem, len(items))
	for i, it := range items {
		out[i] = views.FormItem{SKU: it.SKU, Quantity: it.Quantity}
	}
	return out
}
