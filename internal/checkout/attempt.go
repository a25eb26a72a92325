package checkout

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
)

// Order is what a shopper asks for. The amount is not part of it: it is
// computed from the catalog.
type Order struct {
	Items []catalog.Item
	// Card is the card number to charge. It is passed to the provider and
	// never stored, logged or echoed; only its last four digits are kept.
	Card string
}

// Attempt is one request to place an order under an idempotency key.
type Attempt struct {
	CustomerID uuid.UUID
	Key        string
	// Fingerprint identifies the request (see Fingerprint); the same key
	// with another fingerprint is refused with ErrKeyReused.
	Fingerprint []byte
	Order       Order
	// LockFor overrides the engine's LockTimeout for this attempt; zero
	// takes the context's (WithLockFor), or else the default (Place fills
	// it in).
	LockFor time.Duration
	// Cart, when set, is the cart version the order pays for; Order.Items
	// must be its lines. See CartVersion.
	Cart *CartVersion
	// ExpectedAmount, when not zero, is the amount the client showed the
	// shopper. A new key whose order costs anything else is refused with a
	// *PriceChangedError; a key already in use is judged by what it was
	// first claimed for, as always.
	ExpectedAmount int64
	// ReturnURL, when set, is where the shopper's bank sends them back
	// after 3-D Secure (an absolute URL of the shop's return route, naming
	// the key). The confirm passes it, so that a card that asks for
	// authentication answers requires_action with the bank's page to send
	// the shopper to, and the order waits for them
	// (*AuthenticationRequiredError). Without one (an API client with no
	// browser to send), such a payment is canceled and not completed.
	ReturnURL string
}

// Result is the outcome of an attempt: the response to send, exactly as
// stored for replays.
type Result struct {
	// Status is 201 for a placed order or 402 for a declined payment.
	Status int
	// Body is a Receipt (201) or a problem.Problem (402), as JSON.
	Body json.RawMessage
	// Replayed is true when the outcome was stored by an earlier attempt.
	Replayed bool
	// Joined is true when that earlier attempt was still running when
	// this one came, and PlaceOrAwait waited for it: the caller asked once
	// (a double-click), so a page does not say "already placed".
	Joined bool
}

// Receipt is the body of a placed order, stored and replayed verbatim.
type Receipt struct {
	OrderID  uuid.UUID      `json:"order_id"`
	ChargeID string         `json:"charge_id"`
	Amount   int64          `json:"amount"`
	Currency string         `json:"currency"`
	Status   string         `json:"status"`
	Items    []catalog.Line `json:"items"`
}

// Receipt decodes the body of a 201 result.
func (r Result) Receipt() (Receipt, error) {
	var rc Receipt
	err := json.Unmarshal(r.Body, &rc)
	return rc, err
}

// lockForKey is the context key of WithLockFor.
type lockForKey struct{}

// WithLockFor makes the attempts placed with ctx hold their keys for d
// instead of the engine's LockTimeout. The demo's lab sets it, through a
// middleware mounted only with DEMO=1, to show a takeover in seconds; the
// handlers that place orders know nothing of it.
func WithLockFor(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, lockForKey{}, d)
}
