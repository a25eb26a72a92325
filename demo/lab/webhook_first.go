package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/stripehook"
)

// webhookFirstSteps places one order while the fake Stripe delivers each
// charge's webhook before it answers the confirm that made the charge, then
// reads what the shop's webhook inbox made of the event: the webhook must
// have been handled before the order was written, and left the order to
// the attempt (effect pending), not written one or refunded the charge.
func webhookFirstSteps(ctx context.Context, s *session) error {
	placed := s.place(ctx, "order", uuid.NewString(), oneMug, 0)
	events, err := s.r.q.CustomerStripeEvents(ctx, s.shopper.ID)
	if err != nil {
		return fmt.Errorf("read the webhook inbox: %w", err)
	}
	for _, ev := range events {
		if ev.Type != "payment_intent.succeeded" || ev.PaymentIntentID != placed.chargeID {
			continue
		}
		s.fact("webhook", ev.Effect)
		s.rec.markAt("webhook", ev.ReceivedAt)
		if ev.OrderWrittenAt != nil {
			s.rec.markAt("order written", *ev.OrderWrittenAt)
		}
		switch {
		case ev.Effect != stripehook.EffectPending:
			s.fail(fmt.Sprintf("the webhook's effect was %q, not %q: it did not find the attempt holding the key", ev.Effect, stripehook.EffectPending))
		case ev.OrderWrittenAt == nil:
			s.fail("no order holds the charge the webhook told of")
		case !ev.ReceivedAt.Before(*ev.OrderWrittenAt):
			s.fail("the webhook was handled after the order was written, not before the answer")
		default:
			s.note(fmt.Sprintf("the webhook for %s was handled %s before the order was written, and left the order to the attempt that held the key",
				ev.PaymentIntentID, ev.OrderWrittenAt.Sub(ev.ReceivedAt).Round(time.Millisecond/10)))
		}
		return nil
	}
	s.fail("the shop's webhook inbox holds no payment_intent.succeeded for the order's charge")
	return nil
}
