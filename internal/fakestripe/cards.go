package fakestripe

// Stripe's test PaymentMethods the fake knows, and what a confirm with each
// does. The shop sends these ids, never a card number: Stripe's API takes a
// card number only from Stripe.js or Elements in the shopper's browser.
var testPaymentMethods = map[string]struct {
	declineCode string // "" for a card that succeeds
	last4       string
}{
	"pm_card_visa":                            {"", "4242"},
	"pm_card_visa_debit":                      {"", "5556"},
	"pm_card_mastercard":                      {"", "4444"},
	"pm_card_amex":                            {"", "8431"},
	"pm_card_chargeDeclined":                  {"generic_decline", "0002"},
	"pm_card_chargeDeclinedInsufficientFunds": {"insufficient_funds", "9995"},
}

// DeclinedPaymentMethod is the test PaymentMethod that is always declined.
const DeclinedPaymentMethod = "pm_card_chargeDeclined"
