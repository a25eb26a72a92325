package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/payment"
)

// Where a foreign intent was first met, the values of the
// foreign_intents_total metric's source label.
const (
	SourceReconciler = "reconciler"
	SourceWebhook    = "webhook"
)

// RecordForeign records a succeeded intent this database did not make (no
// order holds it, no key row stores it, and its metadata names another
// deployment, or none, or no customer of this database), once, for the
// operator's page, and counts it the first time. It is never refunded:
// it may be a Payment Link's, an invoice's, another app's or another
// shop's on the same Stripe account.
func RecordForeign(ctx context.Context, d *database.DB, m *metrics.Metrics, log *slog.Logger, in payment.Intent, source string) error {
	_, err := d.RecordForeignIntent(ctx, db.RecordForeignIntentParams{
		PaymentIntentID: in.ID, Source: source, Amount: in.Amount, Currency: in.Currency,
		DeploymentID: in.Metadata.Deployment, CustomerID: in.Metadata.CustomerID, Created: in.Created.Unix(),
	})
	switch {
	case errors.Is(err, database.ErrNotFound):
		return nil // recorded before
	case err != nil:
		return fmt.Errorf("record foreign intent: %w", err)
	}
	m.ForeignIntents.WithLabelValues(source).Inc()
	log.InfoContext(ctx, "a succeeded payment intent this shop did not make; left alone",
		"payment_intent", in.ID, "amount", in.Amount, "currency", in.Currency, "source", source,
		"deployment_id", in.Metadata.Deployment)
	return nil
}

// ParkRefusedRefund parks an intent whose refund the provider refused for
// good (not a refusal that passes), once, for an operator, and counts it
// the first time: asking again would be refused again.
func ParkRefusedRefund(ctx context.Context, d *database.DB, m *metrics.Metrics, log *slog.Logger, in payment.Intent, refused *payment.ProviderError) error {
	customer, _ := uuid.Parse(in.Metadata.CustomerID)
	_, err := d.RecordRefusedRefund(ctx, db.RecordRefusedRefundParams{
		PaymentIntentID: in.ID, Amount: in.Amount, Currency: in.Currency, CustomerID: customer,
		Key: in.Metadata.Key, Reason: refused.Error(),
	})
	switch {
	case errors.Is(err, database.ErrNotFound):
		return nil // parked before
	case err != nil:
		return fmt.Errorf("park refused refund: %w", err)
	}
	m.RefusedRefunds.Inc()
	log.ErrorContext(ctx, "the provider refused to refund a payment intent that no order holds; parked for an operator",
		"payment_intent", in.ID, "amount", in.Amount, "currency", in.Currency, "err", refused)
	return nil
}
