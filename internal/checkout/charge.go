package checkout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/payment"
)

// ProviderKey derives the idempotency key sent to the payment provider from
// ours. Every attempt of one operation — the original, a retry that took it
// over, the background completer — derives the same key, so the provider
// turns them all into one charge. Hashing keeps the client's key, which we
// do not control, out of a third party's logs and within its length limit.
func ProviderKey(customerID uuid.UUID, key string) string {
	sum := sha256.Sum256([]byte(customerID.String() + "\x00" + key))
	return "order_" + hex.EncodeToString(sum[:])
}

// charge is phase 2: the external call. Its error is a *ProviderError when
// the outcome is unknown, a *payment.DeclinedError when it is a definite no.
func (e *Engine) charge(ctx context.Context, a Attempt, priced catalog.Priced) (payment.Charge, error) {
	ch, err := e.payments.Charge(ctx, payment.ChargeRequest{
		IdempotencyKey: ProviderKey(a.CustomerID, a.Key),
		Amount:         priced.Amount,
		Currency:       priced.Currency,
		Card:           a.Order.Card,
		Description:    fmt.Sprintf("order for customer %s", a.CustomerID),
	})
	var unavailable *payment.UnavailableError
	if errors.As(err, &unavailable) {
		// The key stays started and locked: a retry before the lock expires
		// is told to wait, one after it takes over and asks the provider
		// again with the same derived key.
		return payment.Charge{}, &ProviderError{Reason: unavailable.Reason, RetryAfter: e.lockFor(a), Err: err}
	}
	return ch, err
}
