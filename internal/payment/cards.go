package payment

import "strings"

// TestCards maps Stripe's test card numbers to the test PaymentMethods that
// stand for them. The shop takes a card number in its form and API, but
// Stripe's API takes a number only from Stripe.js or Elements in the
// shopper's browser (the number must never touch the shop's server), so
// the shop sends the PaymentMethod of a test card, and refuses any other
// number: a real card needs Stripe.js, which this shop does not have.
var TestCards = map[string]string{
	"4242424242424242": "pm_card_visa",
	"4000056655665556": "pm_card_visa_debit",
	"5555555555554444": "pm_card_mastercard",
	"378282246310005":  "pm_card_amex",
	"4000000000000002": "pm_card_chargeDeclined",
	"4000000000009995": "pm_card_chargeDeclinedInsufficientFunds",
}

// The test cards the shop's pages offer.
const (
	SucceedingCard = "4242424242424242"
	DeclinedCard   = "4000000000000002"
)

// PaymentMethod returns the PaymentMethod to send for card, digits only, or
// a test PaymentMethod (pm_card_…) given as it is; ok is false for any
// other card number.
func PaymentMethod(card string) (pm string, ok bool) {
	if strings.HasPrefix(card, "pm_card_") {
		return card, true
	}
	pm, ok = TestCards[card]
	return pm, ok
}
