package views

import (
	"net/url"
	"time"

	"exactlyonce/idem"
)

// Page is what the layout needs besides the page's own content.
type Page struct {
	Title string
	// Styles and Scripts name the page's own assets in static/, linked
	// beside the shop's app.css and app.js: what one page alone needs (the
	// catalog's cards, Add to cart in place, local times) stays out of the
	// others' weight, the checkout page's budget above all.
	Styles, Scripts []string
	// RefreshURL, when set, makes the browser load it after RefreshSeconds
	// with no script: how the processing page waits without JavaScript.
	RefreshURL     string
	RefreshSeconds int
	// RefreshWithoutScript keeps the refresh for browsers without
	// JavaScript (in <noscript>): a page with a form to keep, whose script
	// follows the order without leaving it.
	RefreshWithoutScript bool
}

// Link is a call to action.
type Link struct {
	Href  string
	Label string
}

// Product is one card of the catalog.
type Product struct {
	SKU  string
	Name string
	// Description is the product's one line of copy, or "".
	Description string
	Price       Money
	// InCart is how many the cart holds; the add button sets InCart+1, a
	// quantity, so a double-click adds one, not two.
	InCart int
	// Left is how many are left of a product that keeps stock; nil for one
	// made to order, which is never sold out.
	Left *int
}

// SoldOut reports whether none is left of a product that keeps stock.
func (p Product) SoldOut() bool { return p.Left != nil && *p.Left == 0 }

// FewLeft reports whether the catalog says how many are left: a product
// that keeps stock and has a handful.
func (p Product) FewLeft() bool { return p.Left != nil && *p.Left > 0 && *p.Left <= fewLeft }

// fewLeft is the count under which the catalog says how many are left.
const fewLeft = 10

// CatalogPage is /.
type CatalogPage struct {
	CSRF     string
	Products []Product
	// Added is the SKU the shopper just added (by the catalog's form,
	// without JavaScript), and AddedNote says so, shown in its card.
	Added, AddedNote string
}

// Line is a priced line of a cart, an order summary or a receipt.
type Line struct {
	SKU       string
	Name      string
	Quantity  int
	UnitPrice Money
	LineTotal Money
}

// CartPage is /cart.
type CartPage struct {
	// Flash says what the form just sent did ("Added Espresso mug to
	// your cart."), or is empty.
	Flash       string
	CSRF        string
	Lines       []Line
	Total       Money
	MaxQuantity int
}

// FormItem is one line of the cart snapshot a checkout form carries.
type FormItem struct {
	SKU      string
	Quantity int
}

// CheckoutForm is what a pay form sends back: the key minted when it was
// rendered, the snapshot of the cart and the amount the shopper saw, and
// the card number only when the form answers the POST that carried it.
type CheckoutForm struct {
	CSRF   string
	Key    string
	KeySig string
	// CartID and CartVersion name the cart version the form pays for; the
	// key is that version's, the same in every tab that shows it.
	CartID      string
	CartVersion int64
	Items       []FormItem
	Amount      int64
	// CardHint names the card of an earlier attempt ("ending in 4242"),
	// so that a retry uses the same one.
	CardHint string
	// CardError says what was wrong with the card number sent.
	CardError string
	// Card is the number as the shopper typed it, rendered back into the
	// field (value=) only in the answer to the POST that carried it (a
	// typo, a cart that changed, an outage), so that the shopper does not
	// type it again. That answer is sent with Cache-Control: no-store, and
	// the number is never logged nor stored: it lives in that one response.
	Card string
	// Declined, when set, is the refusal of the card just sent, shown under
	// the card field of a new form (a new key: the declined one is final).
	Declined *Decline
}

// Decline is why the last card was refused, said under the card field.
type Decline struct {
	Title   string
	Message string
	// Replayed is set when the shopper sent the declined form again.
	Replayed bool
	// Again labels the link to the card field of the new form.
	Again string
}

// CardInvalid reports whether the card field is the one at fault.
func (f CheckoutForm) CardInvalid() bool { return f.CardError != "" || f.Declined != nil }

// cardDescribedBy is the card field's aria-describedby: the live check's
// hint, the hint of an earlier card, and the error, when there are.
func cardDescribedBy(f CheckoutForm) string {
	ids := "card-check"
	if f.CardHint != "" {
		ids += " card-hint"
	}
	if f.CardInvalid() {
		ids += " card-error"
	}
	return ids
}

// TestCard is a card number the fake provider knows.
type TestCard struct {
	Number   string
	Outcome  string
	Succeeds bool
}

// CheckoutPage is GET /checkout.
type CheckoutPage struct {
	// CartChanged is set when a form for an older version of the cart was
	// sent: this page shows the cart as it is now, with a fresh form.
	CartChanged bool
	Lines       []Line
	Total       Money
	Form        CheckoutForm
	Cards       []TestCard
}

// ReceiptPage is /orders/{id}.
type ReceiptPage struct {
	OrderID string
	Amount  Money
	// PlacedAt is shown in UTC, zone written out, and in the shopper's
	// own zone by browse.js.
	PlacedAt time.Time
	Lines    []Line
	// AlreadyPlaced is set when the shopper got here by sending the same
	// order again: it was not charged a second time.
	AlreadyPlaced bool
	// CartID is the cart the order closed (the nil UUID for none): the
	// page's script tells other checkout tabs of that cart.
	CartID string
	// PointsAwarded is whether the order's loyalty job has run; then
	// OrderPoints is what the order earned. Balance is the shopper's sum.
	PointsAwarded bool
	OrderPoints   int64
	Balance       int64
	// Refunds are the order's refunds; CancelledAt is set once it is
	// cancelled. Cancel is the cancel form, while the order may still be
	// cancelled (nil otherwise); CancelOutcome is how a cancel sent from
	// it ended ("refunded" or "failed"; "" when none was just sent).
	Refunds       []RefundLine
	CancelledAt   *time.Time
	Cancel        *CancelForm
	CancelOutcome string
}

// RefundLine is one refund of an order.
type RefundLine struct {
	Kind   string // "cancel" or "refund"
	Amount Money
	State  string // "pending", "refunded" or "failed"
	At     time.Time
}

// CancelForm is an order's cancel button: its key, minted when the page is
// rendered, makes a double click or a resubmit cancel once.
type CancelForm struct {
	CSRFToken string
	Action    string
	Key       idem.FormKey
	// Refund is what the cancel gives back; Until is when the window ends.
	Refund Money
	Until  time.Time
}

// OrderSummary is one row of /orders.
type OrderSummary struct {
	ID     string
	URL    string
	Amount Money
	// PlacedAt is shown as the receipt's is, its date and clock apart so
	// that a narrow column breaks between them and nowhere else.
	PlacedAt time.Time
	Items    int
}

// OrdersPage is /orders.
type OrdersPage struct {
	Orders []OrderSummary
	// Points is the shopper's loyalty balance.
	Points int64
	// CSRF is the sign-out form's token; SessionDays how long the
	// browser's session lasts after its last visit.
	CSRF        string
	SessionDays int
	// SignedIn is set when the browser has a shopper, who can sign out.
	SignedIn bool
}

// OrderAnswer is the page an order from the pay form ends on when it does
// not end on its receipt: exactly one of its fields is set. The checkout
// decides which from the engine's answer and renders it in one place
// (Answer), for a submit and for the status page alike.
type OrderAnswer struct {
	// Checkout is the pay form again: a card number to correct, or the
	// cart as it is now when the form was for an older version of it.
	Checkout   *CheckoutPage
	Declined   *DeclinedPage
	Outage     *OutagePage
	Processing *ProcessingPage
	// Authenticate sends the shopper to their bank (3-D Secure).
	Authenticate *AuthenticatePage
}

// AuthenticatePage takes the shopper to their bank's page, where they
// authenticate the payment (3-D Secure), by a meta refresh and a link: a
// page rather than a 303, so that the pay form's script, which sends the
// form with fetch and cannot follow a redirect to another origin, shows it
// and goes on from there as a browser without script does.
type AuthenticatePage struct {
	URL string
	// Waiting is the status page of an order whose shopper was sent to
	// their bank and has not confirmed yet (back on the shop without
	// having done it): a link to the bank, no automatic redirect.
	Waiting bool
}

// ProcessingPage is shown while an earlier submit of the same order is
// still running, or has stopped without an answer (Retry).
type ProcessingPage struct {
	StatusURL      string
	RefreshSeconds int
	// Retry, when set, offers to resume an order nobody is working on any
	// more, under the same key.
	Retry *CheckoutForm
}

// DeclinedPage is a declined payment, final for its key.
type DeclinedPage struct {
	Title   string
	Message string
	// Replayed is set when this is the stored answer to a resubmitted form.
	Replayed bool
	// Again labels the link to a new checkout.
	Again string
}

// OutagePage is a payment whose outcome is not known yet.
type OutagePage struct {
	// RetryAfterSeconds is when trying again is useful: a couple of
	// seconds once the attempt handed its key back, the lock when it could
	// not (a retry before then waits for it).
	RetryAfterSeconds int
	Retry             CheckoutForm
	// StatusURL is the order's status page, which tells how it ended: the
	// page links it, refreshes to it without JavaScript, and asks it with.
	StatusURL string
}

// outageRefresh is how long the outage page waits before it follows the
// order without JavaScript: the Retry-After, and a few seconds at least,
// long enough to read the page.
func outageRefresh(p OutagePage) int { return max(p.RetryAfterSeconds, 5) }

// ErrorPage is any refusal or failure.
type ErrorPage struct {
	Status  int
	Title   string
	Message string
	Action  Link
}

// processingRefresh is where a processing page reloads to: its status while
// the order runs, nowhere once it shows a form (see Processing).
func processingRefresh(p ProcessingPage) string {
	if p.Retry != nil {
		return ""
	}
	return p.StatusURL
}

// authenticateRefresh is where the page goes on by itself: the bank's page,
// unless the shopper is back from it (Waiting), who chooses.
func authenticateRefresh(p AuthenticatePage) string {
	if p.Waiting {
		return ""
	}
	return p.URL
}

// checkoutTitle is the checkout page's title: what went wrong first, when
// the page answers a refused card, so that it is the first thing heard.
func checkoutTitle(p CheckoutPage) string {
	switch {
	case p.Form.Declined != nil:
		return p.Form.Declined.Title + " · Checkout"
	case p.Form.CardError != "":
		return "Check the card number · Checkout"
	}
	return "Checkout"
}

// statusURL is the status page of the order a form's key names: where the
// checkout page, shown again from the browser's cache, asks whether its
// order was paid meanwhile (static/app.js).
func statusURL(key string) string {
	return "/checkout/status?" + url.Values{"key": {key}}.Encode()
}

// AlreadyPaidPage is GET /checkout when its cart was just ordered.
type AlreadyPaidPage struct {
	ReceiptURL string
}
