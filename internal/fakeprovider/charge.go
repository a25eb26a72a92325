package fakeprovider

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"exactlyonce/internal/fakeprovider/providerdb"
)

// Charge statuses, as stored in provider.charges.status.
const (
	statusSucceeded = "succeeded"
	statusDeclined  = "declined"
	// statusCanceled is not a charge's status: it is what a cancel answers
	// when it found no charge and closed the key.
	statusCanceled = "canceled"
)

// DeclinedCard is the test card number that is always declined.
const DeclinedCard = "4000000000000002"

// SucceedingCard is a test card every charge of which succeeds (unless a
// fault is injected): the card an API order that names none is charged.
const SucceedingCard = "4242424242424242"

// chargeJSON is a charge as the API shows it.
type chargeJSON struct {
	ID          string `json:"id"`
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	Status      string `json:"status"`
	CardLast4   string `json:"card_last4"`
	Description string `json:"description"`
	Created     int64  `json:"created"`
}

func toJSON(ch providerdb.ProviderCharge) chargeJSON {
	return chargeJSON{
		ID:          ch.ID,
		Amount:      ch.Amount,
		Currency:    ch.Currency,
		Status:      ch.Status,
		CardLast4:   ch.CardLast4,
		Description: ch.Description,
		Created:     ch.CreatedAt.Unix(),
	}
}

// createAnswer is the status and body that answer the call that created ch.
// It depends on the stored row alone, which is what makes every replay of the
// call byte-for-byte the same as the first answer.
func createAnswer(ch providerdb.ProviderCharge) (int, []byte) {
	if ch.Status == statusDeclined {
		return http.StatusPaymentRequired, errorBody(&apiError{
			Type:    typeCard,
			Code:    "card_declined",
			Message: "Your card was declined.",
			Charge:  ch.ID,
		})
	}
	return http.StatusCreated, mustMarshal(toJSON(ch))
}

func mustMarshal(v chargeJSON) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal charge: %v", err)) // strings and ints always marshal
	}
	return b
}

// newChargeID returns "ch_" and 32 hex digits. A version 7 UUID sorts by
// creation time, which keeps the primary key index append-mostly.
func newChargeID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new charge id: %w", err)
	}
	return "ch_" + hex.EncodeToString(u[:]), nil
}
