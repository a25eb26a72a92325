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
	// Stripe asks for 3-D Secure on every on-session payment with these:
	// the confirm answers requires_action, and the pay form takes its
	// shopper to their bank and back (an API order, with no browser to
	// send there, is canceled: nothing is charged).
	"4000002760003184": "pm_card_authenticationRequired",
	"4000002500003155": "pm_card_authenticationRequiredOnSetup",
}

// FakePaymentMethods are PaymentMethods only the fake Stripe knows
// (internal/fakestripe), which the shop takes so that its tests and demo
// can meet a status no Stripe test card gives: pm_card_processing leaves
// the intent processing. Stripe itself answers them 400 resource_missing.
var FakePaymentMethods = []string{"pm_card_processing"}

// The test cards the shop's pages offer.
const (
	SucceedingCard     = "4242424242424242"
	DeclinedCard       = "4000000000000002"
	AuthenticationCard = "4000002760003184"
)

// paymentMethods are the PaymentMethods the shop sends: those of TestCards
// and FakePaymentMethods.
var paymentMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, pm := range TestCards {
		m[pm] = true
	}
	for _, pm := range FakePaymentMethods {
		m[pm] = true
	}
	return m
}()

// PaymentMethod returns the PaymentMethod to send for card, digits only, or
// a test PaymentMethod (pm_card_…) given as it is; ok is false for any
// other card number, and for a PaymentMethod the shop does not list: a
// made-up pm_card_… would reach the provider and come back a 400, or, for
// one Stripe knows and the shop does not, with a status the shop was never
// shown to handle.
func PaymentMethod(card string) (pm string, ok bool) {
	if strings.HasPrefix(card, "pm_card_") {
		return card, paymentMethods[card]
	}
	pm, ok = TestCards[card]
	return pm, ok
}
