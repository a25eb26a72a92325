package fakestripe

import (
	"context"
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
	// Refunded is whether its charge was refunded (read with the intent).
	Refunded bool
}

const intentColumns = `i.id, i.seq, i.amount, i.currency, i.description, i.metadata, i.status, i.payment_method,
	i.latest_charge, i.last_payment_error, i.canceled_at, i.cancellation_reason, i.created, i.processing_until,
	i.return_url, i.authenticate_url, EXISTS (SELECT FROM fakestripe.refunds r WHERE r.payment_intent_id = i.id)`

type scanner interface{ Scan(dest ...any) error }

func scanIntent(row scanner) (Intent, error) {
	var in Intent
	var metadata []byte
	err := row.Scan(&in.ID, &in.Seq, &in.Amount, &in.Currency, &in.Description, &metadata, &in.Status, &in.PaymentMethod,
		&in.LatestCharge, &in.LastPaymentError, &in.CanceledAt, &in.CancellationReason, &in.Created, &in.ProcessingUntil,
		&in.ReturnURL, &in.AuthenticateURL, &in.Refunded)
	if err != nil {
		return Intent{}, err
	}
	if err := json.Unmarshal(metadata, &in.Metadata); err != nil {
		return Intent{}, fmt.Errorf("metadata: %w", err)
	}
	return in, nil
}

// lockIntent reads an intent and locks it until the transaction ends: a
// confirm and a cancel of one intent are decided one at a time, so an
// intent ends succeeded or canceled, never both.
func lockIntent(ctx context.Context, conn querier, id string) (Intent, error) {
	return scanIntent(conn.QueryRow(ctx, `SELECT `+intentColumns+` FROM fakestripe.payment_intents i WHERE i.id = $1 FOR UPDATE`, id))
}

// saveIntent writes the changeable fields of in back.
func saveIntent(ctx context.Context, conn querier, in Intent) error {
	_, err := conn.Exec(ctx, `UPDATE fakestripe.payment_intents
		SET status = $2, payment_method = $3, latest_charge = $4, last_payment_error = $5, canceled_at = $6, cancellation_reason = $7,
		    processing_until = $8, return_url = $9, authenticate_url = $10
		WHERE id = $1`,
		in.ID, in.Status, in.PaymentMethod, in.LatestCharge, in.LastPaymentError, in.CanceledAt, in.CancellationReason,
		in.ProcessingUntil, in.ReturnURL, in.AuthenticateURL)
	if err != nil {
		return fmt.Errorf("save intent: %w", err)
	}
	return nil
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
