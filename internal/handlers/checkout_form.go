package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

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
	// checked by cardProblem, not here, so that a typo can be answered with
	// the same form.
	card string
}

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

// parseSubmission reads a pay form's fields. It checks their shape only;
// whether they are the form this server rendered is the signature's to say
// (checkFormKey).
func parseSubmission(form url.Values) (submission, error) {
	var err error
	s := submission{
		key:  strings.TrimSpace(form.Get("idempotency_key")),
		sig:  form.Get("key_sig"),
		card: strings.NewReplacer(" ", "", "-", "").Replace(form.Get("card")),
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

// cardProblem says what is wrong with the card number, in words for the
// field, or "" when it is plausible. The provider has the last word.
func (s submission) cardProblem() string {
	if len(s.card) < 12 || len(s.card) > 19 || strings.Trim(s.card, "0123456789") != "" {
		return "Enter a card number of 12 to 19 digits, such as one of the test cards."
	}
	return ""
}

// last4 is the end of the card number; callers check the card first, and a
// shorter one is returned whole rather than panic.
func (s submission) last4() string { return s.card[max(0, len(s.card)-4):] }

// fingerprint identifies the order the form asks for: its lines, the amount
// it showed and the card's last four digits. Not the whole card number: a
// digest of one is as good as the number (see fakeprovider's params hash),
// so it must not be stored. A form changed after its key was first used
// gets another fingerprint, and the engine refuses it (ErrKeyReused).
//
// accept holds what the shop's earlier rule made of the same form
// (checkout.LegacyFingerprint), which keys claimed before the change hold.
func (s submission) fingerprint() (fp []byte, accept [][]byte, err error) {
	items := slices.Clone(s.items)
	slices.SortStableFunc(items, func(a, b catalog.Item) int { return strings.Compare(a.SKU, b.SKU) })
	body, err := json.Marshal(struct {
		Items     []catalog.Item `json:"items"`
		Amount    int64          `json:"amount"`
		CardLast4 string         `json:"card_last4"`
	}{items, s.amount, s.last4()})
	if err != nil {
		return nil, nil, fmt.Errorf("encode order: %w", err)
	}
	legacy, err := checkout.LegacyFingerprint(http.MethodPost, checkoutRoute, body)
	if err != nil {
		return nil, nil, err
	}
	return checkout.Fingerprint(http.MethodPost, checkoutRoute, idem.NormalizeJSON(body)), [][]byte{legacy}, nil
}

// retryForm is the pay form again, with the same key, snapshot and amount:
// sending it continues the same order. The card is not echoed; the shopper
// types it again and is reminded which one it was.
func (s submission) retryForm(csrf string) views.CheckoutForm {
	f := views.CheckoutForm{CSRF: csrf, Key: s.key, KeySig: s.sig, CartID: s.cartID.String(), CartVersion: s.version,
		Amount: s.amount, Items: formItems(s.items)}
	if s.cardProblem() == "" {
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
