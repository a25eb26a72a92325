package fakestripe

import (
	"encoding/json"
	"fmt"
)

// PaymentIntent statuses the fake reaches. (Stripe has one more,
// requires_capture for manual capture, which the shop does not use.)
const (
	StatusRequiresPaymentMethod = "requires_payment_method"
	StatusRequiresConfirmation  = "requires_confirmation"
	// StatusRequiresAction: the bank asks for 3-D Secure; nothing is
	// charged unless the shopper authenticates (which the shop, with no
	// Stripe.js, cannot let them do).
	StatusRequiresAction = "requires_action"
	// StatusProcessing: the payment is on its way; it will succeed or fail.
	StatusProcessing = "processing"
	StatusSucceeded  = "succeeded"
	StatusCanceled   = "canceled"
)

// Intent is a PaymentIntent as the fake stores it.
type Intent struct {
	ID                 string
	Seq                int64
	Amount             int64
	Currency           string
	Description        *string
	Metadata           map[string]string
	Status             string
	PaymentMethod      *string
	LatestCharge       *string
	LastPaymentError   json.RawMessage
	CanceledAt         *int64
	CancellationReason *string
	Created            int64
	// ProcessingUntil is when a processing intent moves on by itself (Unix
	// milliseconds); nil keeps it processing until MoveOn.
	ProcessingUntil *int64
	// ReturnURL is where the authentication page sends the shopper back
	// (the confirm's return_url), and AuthenticateURL that page, on the
	// fake: set by a confirm with return_url, for a card that asks for 3-D
	// Secure.
	ReturnURL, AuthenticateURL *string
	// AmountRefunded is how much of its charge the refunds gave back, in
	// all (the charge's amount_refunded).
	AmountRefunded int64
	// Refunded is whether its charge was refunded in full, Stripe's
	// meaning of the charge's refunded: AmountRefunded is Amount (read
	// with the intent, never written).
	Refunded bool
}

// refundedInFull sets Refunded from AmountRefunded, as both stores read it.
func (in *Intent) refundedInFull() {
	in.Refunded = in.AmountRefunded > 0 && in.AmountRefunded >= in.Amount
}

// JSON is the intent as Stripe's API shows it: every field the published
// schema requires (nullable ones as null), and the ones the shop reads.
func (in Intent) JSON() json.RawMessage {
	var paymentMethod any
	if in.PaymentMethod != nil {
		paymentMethod = *in.PaymentMethod
	}
	received := int64(0)
	if in.Status == StatusSucceeded {
		received = in.Amount
	}
	metadata := in.Metadata
	if metadata == nil {
		metadata = map[string]string{}
	}
	var lastError any
	if len(in.LastPaymentError) > 0 {
		lastError = in.LastPaymentError
	}
	// What Stripe shows for the two statuses that wait: the action the
	// shopper must take in the browser (a redirect to the bank's page and
	// back to return_url, for a confirm that gave one; else Stripe.js
	// handles use_stripe_sdk), and that a card payment is on its way.
	var nextAction, processing any
	switch {
	case in.Status == StatusRequiresAction && in.AuthenticateURL != nil && in.ReturnURL != nil:
		nextAction = map[string]any{"type": "redirect_to_url", "redirect_to_url": map[string]any{
			"url": *in.AuthenticateURL, "return_url": *in.ReturnURL,
		}}
	case in.Status == StatusRequiresAction:
		nextAction = map[string]any{"type": "use_stripe_sdk", "use_stripe_sdk": map[string]any{
			"type": "three_d_secure_redirect", "stripe_js": "https://hooks.stripe.com/3d_secure_2/hosted?payment_intent=" + in.ID,
		}}
	case in.Status == StatusProcessing:
		processing = map[string]any{"type": "card", "card": map[string]any{}}
	}
	b, err := json.Marshal(map[string]any{
		"id":                                   in.ID,
		"object":                               "payment_intent",
		"amount":                               in.Amount,
		"amount_capturable":                    0,
		"amount_received":                      received,
		"application":                          nil,
		"application_fee_amount":               nil,
		"automatic_payment_methods":            nil,
		"canceled_at":                          in.CanceledAt,
		"cancellation_reason":                  in.CancellationReason,
		"capture_method":                       "automatic",
		"client_secret":                        in.ID + "_secret_fake",
		"confirmation_method":                  "automatic",
		"created":                              in.Created,
		"currency":                             in.Currency,
		"customer":                             nil,
		"description":                          in.Description,
		"last_payment_error":                   lastError,
		"latest_charge":                        in.LatestCharge,
		"livemode":                             false,
		"metadata":                             metadata,
		"next_action":                          nextAction,
		"on_behalf_of":                         nil,
		"payment_method":                       paymentMethod,
		"payment_method_configuration_details": nil,
		"payment_method_options":               map[string]any{},
		"payment_method_types":                 []string{"card"},
		"processing":                           processing,
		"receipt_email":                        nil,
		"review":                               nil,
		"setup_future_usage":                   nil,
		"shipping":                             nil,
		"source":                               nil,
		"statement_descriptor":                 nil,
		"statement_descriptor_suffix":          nil,
		"status":                               in.Status,
		"transfer_data":                        nil,
		"transfer_group":                       nil,
	})
	if err != nil {
		panic(fmt.Sprintf("marshal intent: %v", err)) // plain values always marshal
	}
	return b
}
