package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// PaymentIntent statuses the shop acts on.
const (
	StatusRequiresPaymentMethod = string(stripe.PaymentIntentStatusRequiresPaymentMethod)
	StatusRequiresConfirmation  = string(stripe.PaymentIntentStatusRequiresConfirmation)
	StatusRequiresAction        = string(stripe.PaymentIntentStatusRequiresAction)
	StatusProcessing            = string(stripe.PaymentIntentStatusProcessing)
	StatusSucceeded             = string(stripe.PaymentIntentStatusSucceeded)
	StatusCanceled              = string(stripe.PaymentIntentStatusCanceled)
)

// Metadata is what the shop writes on each PaymentIntent: whose operation
// it is, so that an intent whose key row was lost can still be explained
// (and its refund recorded on that key's audit trail), and which
// deployment made it, so that the shop never refunds an intent it did not
// make (one Stripe account holds Payment Links, invoices, other apps, a
// staging and a production shop).
type Metadata struct {
	CustomerID  string // the customer's id
	Key         string // the client's idempotency key
	OperationID string // the key's operation, one per life of the key
	// Deployment is the marker of the database whose shop created the
	// intent. A Client made with Config.Deployment writes its own on every
	// create, whatever the request says.
	Deployment string
}

// The metadata's names at the provider.
const (
	metaCustomer   = "customer_id"
	metaKey        = "idempotency_key"
	metaOperation  = "operation_id"
	metaDeployment = "deployment_id"
)

func (m Metadata) params() map[string]string {
	p := map[string]string{metaCustomer: m.CustomerID, metaKey: m.Key, metaOperation: m.OperationID}
	if m.Deployment != "" {
		p[metaDeployment] = m.Deployment
	}
	return p
}

func metadataOf(md map[string]string) Metadata {
	return Metadata{CustomerID: md[metaCustomer], Key: md[metaKey], OperationID: md[metaOperation],
		Deployment: md[metaDeployment]}
}

// Intent is a PaymentIntent as the shop reads it.
type Intent struct {
	ID       string
	Amount   int64
	Currency string
	Status   string
	Metadata Metadata
	// Declined is set when its last confirm was declined (the intent is
	// then requires_payment_method), with the provider's message, and
	// DeclineCode with the issuer's reason, when the provider gave one.
	Declined    string
	DeclineCode string
	// AuthenticateURL is where the shopper authenticates a requires_action
	// intent with their bank (3-D Secure), for a confirm that gave a
	// return URL: its next_action.redirect_to_url; "" otherwise.
	AuthenticateURL string
	Created         time.Time
	// Replayed reports that the provider answered from an earlier call with
	// the same idempotency key.
	Replayed bool
}

// IntentOf reads an intent the SDK decoded, such as the object of a
// webhook's payment_intent.* event.
func IntentOf(pi *stripe.PaymentIntent) Intent { return intentOf(pi) }

func intentOf(pi *stripe.PaymentIntent) Intent {
	in := Intent{
		ID: pi.ID, Amount: pi.Amount, Currency: string(pi.Currency), Status: string(pi.Status),
		Metadata: metadataOf(pi.Metadata), Created: time.Unix(pi.Created, 0),
	}
	if pi.NextAction != nil && pi.NextAction.RedirectToURL != nil {
		in.AuthenticateURL = pi.NextAction.RedirectToURL.URL
	}
	if pi.LastPaymentError != nil {
		in.Declined = pi.LastPaymentError.Msg
		in.DeclineCode = string(pi.LastPaymentError.DeclineCode)
	}
	if pi.LastResponse != nil {
		in.Replayed = pi.LastResponse.Header.Get("Idempotent-Replayed") == "true"
	}
	return in
}

// IntentRequest asks for a PaymentIntent. Its parameters are derived from
// the key row alone (the card comes at the confirm), so the completer can
// send the same create again to learn the id of an intent whose answer was
// lost: the same key and parameters replay the first answer.
type IntentRequest struct {
	IdempotencyKey string
	Amount         int64 // in the currency's smallest unit
	Currency       string
	Description    string
	Metadata       Metadata
	// PaymentMethod and Confirm make the create charge at once (one call
	// instead of two); the shop uses two, see README "PaymentIntents".
	PaymentMethod string
	Confirm       bool
}

// CreateIntent creates a PaymentIntent, requires_payment_method (or charged,
// with Confirm). Calls with the same IdempotencyKey and parameters create
// one.
func (c *Client) CreateIntent(ctx context.Context, req IntentRequest) (Intent, error) {
	if req.IdempotencyKey == "" {
		return Intent{}, errors.New("create intent: idempotency key is required")
	}
	p := &stripe.PaymentIntentCreateParams{
		Amount:             stripe.Int64(req.Amount),
		Currency:           stripe.String(req.Currency),
		Description:        stripe.String(req.Description),
		PaymentMethodTypes: []*string{stripe.String("card")},
	}
	md := req.Metadata
	if c.deployment != "" {
		// Constant for the process (and the database), so the request is
		// still derived from the key row alone: the completer's create,
		// sent again to learn a lost id, is the same request.
		md.Deployment = c.deployment
	}
	p.Metadata = md.params()
	p.SetIdempotencyKey(req.IdempotencyKey)
	p.Context = ctx
	if req.PaymentMethod != "" {
		p.PaymentMethod = stripe.String(req.PaymentMethod)
	}
	if req.Confirm {
		p.Confirm = stripe.Bool(true)
	}
	pi, err := c.sc.V1PaymentIntents.Create(ctx, p)
	if err != nil {
		err = classify(ctx, err)
		if req.Confirm {
			err = canceledOr(err)
		}
		return Intent{}, fmt.Errorf("create intent: %w", err)
	}
	return intentOf(pi), nil
}

// ConfirmIntent charges the intent id with the payment method, under its
// own idempotency key. It returns the intent in whatever status the confirm
// left it: succeeded, but also requires_action (the bank asks for 3-D
// Secure) or processing, which Stripe answers 200 too and which have not
// charged, so the caller must look at Status. Besides, it returns a
// *DeclinedError, ErrCanceled (the completer canceled the intent first), an
// *UnavailableError or a *ProviderError.
func (c *Client) ConfirmIntent(ctx context.Context, id, idempotencyKey, paymentMethod, returnURL string) (Intent, error) {
	if id == "" || idempotencyKey == "" {
		return Intent{}, errors.New("confirm intent: intent and idempotency key are required")
	}
	p := &stripe.PaymentIntentConfirmParams{PaymentMethod: stripe.String(paymentMethod)}
	if returnURL != "" {
		// A card that asks for 3-D Secure then answers requires_action
		// with next_action.redirect_to_url, to send the shopper to their
		// bank and back here.
		p.ReturnURL = stripe.String(returnURL)
	}
	p.SetIdempotencyKey(idempotencyKey)
	p.Context = ctx
	pi, err := c.sc.V1PaymentIntents.Confirm(ctx, id, p)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && se.Code == stripe.ErrorCodePaymentIntentUnexpectedState && se.PaymentIntent != nil &&
			se.PaymentIntent.Status == stripe.PaymentIntentStatusSucceeded {
			// Confirmed already, by a call whose answer was lost.
			return intentOf(se.PaymentIntent), nil
		}
		return Intent{}, fmt.Errorf("confirm intent: %w", canceledOr(classify(ctx, err)))
	}
	return intentOf(pi), nil
}

// canceledOr turns the provider's refusal to confirm a canceled intent into
// ErrCanceled.
func canceledOr(err error) error {
	var pe *ProviderError
	if errors.As(err, &pe) && pe.Code == string(stripe.ErrorCodePaymentIntentUnexpectedState) && pe.canceled {
		return ErrCanceled
	}
	return err
}

// RetrieveIntent reads the intent id.
func (c *Client) RetrieveIntent(ctx context.Context, id string) (Intent, error) {
	p := &stripe.PaymentIntentRetrieveParams{}
	p.Context = ctx
	pi, err := c.sc.V1PaymentIntents.Retrieve(ctx, id, p)
	if err != nil {
		return Intent{}, fmt.Errorf("retrieve intent: %w", classify(ctx, err))
	}
	return intentOf(pi), nil
}

// CancelIntent cancels the intent id, so that no confirm can charge it any
// more, and returns it. An intent that succeeded, or was canceled already,
// cannot be canceled: Stripe refuses with the intent inside its error, and
// CancelIntent returns that intent, so that canceling is idempotent and
// its answer is the intent's final state either way. Nor, mostly, can a
// processing one: CancelIntent returns it too, still processing, and the
// caller must wait for it to succeed or fail.
func (c *Client) CancelIntent(ctx context.Context, id, idempotencyKey string) (Intent, error) {
	p := &stripe.PaymentIntentCancelParams{CancellationReason: stripe.String("abandoned")}
	p.SetIdempotencyKey(idempotencyKey)
	p.Context = ctx
	pi, err := c.sc.V1PaymentIntents.Cancel(ctx, id, p)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && se.Code == stripe.ErrorCodePaymentIntentUnexpectedState && se.PaymentIntent != nil &&
			(se.PaymentIntent.Status == stripe.PaymentIntentStatusSucceeded || se.PaymentIntent.Status == stripe.PaymentIntentStatusCanceled ||
				se.PaymentIntent.Status == stripe.PaymentIntentStatusProcessing) {
			return intentOf(se.PaymentIntent), nil
		}
		return Intent{}, fmt.Errorf("cancel intent: %w", classify(ctx, err))
	}
	return intentOf(pi), nil
}

// ListIntents returns every intent created at or after from (Unix
// seconds), oldest first, reading Stripe's list (newest first) page by page
// with starting_after while has_more, as the SDK's iterator does; limit is
// the page size.
func (c *Client) ListIntents(ctx context.Context, from int64, limit int64) ([]Intent, error) {
	var out []Intent
	for in, err := range c.Intents(ctx, from, limit) {
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	slices.Reverse(out)
	return out, nil
}

// Intents yields every intent created at or after from (Unix seconds),
// newest first, as Stripe lists them, reading page by page (limit a page)
// with starting_after while has_more: a caller that reads them one at a
// time holds one page in memory, however many intents there are. It stops
// at the first error, which it yields.
func (c *Client) Intents(ctx context.Context, from int64, limit int64) iter.Seq2[Intent, error] {
	return func(yield func(Intent, error) bool) {
		p := &stripe.PaymentIntentListParams{CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: from}}
		p.Limit = stripe.Int64(limit)
		p.Context = ctx
		// List reads the first page as it is called (stripe-go v85); All
		// yields its intents and reads the next pages while has_more.
		for pi, err := range c.sc.V1PaymentIntents.List(ctx, p).All(ctx) {
			if err != nil {
				yield(Intent{}, fmt.Errorf("list intents: %w", classify(ctx, err)))
				return
			}
			if !yield(intentOf(pi), nil) {
				return
			}
		}
	}
}

// CanStillSucceed reports whether an intent in status may still end
// succeeded: it is neither succeeded nor canceled (requires_payment_method,
// requires_confirmation, requires_action, processing).
func CanStillSucceed(status string) bool {
	switch status {
	case StatusRequiresPaymentMethod, StatusRequiresConfirmation, StatusRequiresAction, StatusProcessing:
		return true
	}
	return false
}

// Ping lists one intent: an authenticated read that answers only when the
// provider is up and takes the secret key, for the readiness report.
func (c *Client) Ping(ctx context.Context) error {
	p := &stripe.PaymentIntentListParams{}
	p.Limit = stripe.Int64(1)
	p.Context = ctx
	// List reads the first page, and only it, as it is called; Err is that
	// read's error.
	if err := c.sc.V1PaymentIntents.List(ctx, p).Err(); err != nil {
		return fmt.Errorf("list intents: %w", classify(ctx, err))
	}
	return nil
}

// classify turns what the SDK returned into the error it means for the
// shop: a *DeclinedError, an *UnavailableError or a *ProviderError.
func classify(ctx context.Context, err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return &UnavailableError{Reason: ReasonFailed, Err: errors.New("unreadable answer")}
		}
		return unavailable(ctx, err)
	}
	shouldRetry := ""
	if se.LastResponse != nil {
		shouldRetry = se.LastResponse.Header.Get("Stripe-Should-Retry")
	}
	switch {
	case se.HTTPStatusCode >= 500:
		return &UnavailableError{Reason: ReasonFailed, Status: se.HTTPStatusCode,
			Err: fmt.Errorf("%s: %s", se.Type, se.Msg)}
	case se.HTTPStatusCode == http.StatusPaymentRequired && se.Type == stripe.ErrorTypeCard:
		d := &DeclinedError{ChargeID: se.ChargeID, Message: se.Msg, Code: string(se.DeclineCode)}
		if se.PaymentIntent != nil {
			d.IntentID = se.PaymentIntent.ID
		}
		return d
	case se.HTTPStatusCode >= 400:
		return &ProviderError{Status: se.HTTPStatusCode, Type: string(se.Type), Code: string(se.Code),
			Message: se.Msg, ShouldRetry: shouldRetry,
			canceled: se.PaymentIntent != nil && se.PaymentIntent.Status == stripe.PaymentIntentStatusCanceled}
	}
	// A 402 that is no card error, a redirect: none is an answer this API
	// gives, so the outcome is unknown.
	return &UnavailableError{Reason: ReasonFailed, Status: se.HTTPStatusCode,
		Err: fmt.Errorf("unexpected answer with status %d", se.HTTPStatusCode)}
}

// unavailable classifies a failure to get an answer.
func unavailable(ctx context.Context, err error) *UnavailableError {
	var opErr *net.OpError
	var netErr net.Error
	switch {
	// Checked first: a failed dial, even a timed-out one, means the request
	// never left, which is worth more to the caller than why.
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return &UnavailableError{Reason: ReasonUnreachable, Err: err}
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.As(err, &netErr) && netErr.Timeout():
		return &UnavailableError{Reason: ReasonTimeout, Err: err}
	default:
		return &UnavailableError{Reason: ReasonFailed, Err: err}
	}
}
