package checkout

import (
	"strings"

	"exactlyonce/internal/payment"
)

// NormalizeCard returns a card number with the spaces and dashes people type
// taken out, and whether what is left can be a card number: 12 to 19 digits
// whose last digit is the Luhn check digit of the others. Place checks the
// card this way before it claims the key, so a typo is refused with nothing
// stored and the same key still works once it is fixed. A number that is
// not one of Stripe's test cards is refused too (see checkCard).
func NormalizeCard(card string) (string, bool) {
	digits, reason := checkCard(card)
	return digits, reason == ""
}

// The reasons a card number is refused, worded for an API client; both
// name the field. A page words them for a shopper (handlers).
const (
	cardShapeReason = "card must be a number of 12 to 19 digits; spaces and dashes are ignored"
	cardCheckReason = "card is not a valid card number: its last digit is not the Luhn check digit of the others, so a digit is mistyped"
	cardTestReason  = "card must be one of Stripe's test cards (4242 4242 4242 4242, 4000 0000 0000 0002, …) or a test PaymentMethod the shop lists (pm_card_visa, …): " +
		"Stripe takes a real card number only from Stripe.js in the shopper's browser, which this shop does not have"
)

// checkCard normalises a card number and says what is wrong with it, or ""
// when nothing is. A test PaymentMethod (pm_card_visa) is taken as it is,
// if the shop lists it (payment.PaymentMethod): any other pm_card_… is
// refused as a card that is not a test card is, so a made-up one never
// reaches the provider (which would answer it 400, an unknown outcome to
// the shop, and leave the key for the completer), nor one whose statuses
// the shop was never shown to handle. Only Stripe's test cards pass: the
// shop sends Stripe their test PaymentMethods, never a number, since
// Stripe takes a number only from Stripe.js, so any other number is
// refused here, with the fake as with Stripe, before anything is stored.
func checkCard(card string) (digits string, reason string) {
	if strings.HasPrefix(card, "pm_card_") {
		if _, ok := payment.PaymentMethod(card); !ok {
			return card, cardTestReason
		}
		return card, ""
	}
	digits = cardSeparators.Replace(card)
	if len(digits) < 12 || len(digits) > 19 || strings.Trim(digits, "0123456789") != "" {
		return digits, cardShapeReason
	}
	if !luhn(digits) {
		return digits, cardCheckReason
	}
	if _, ok := payment.PaymentMethod(digits); !ok {
		return digits, cardTestReason
	}
	return digits, ""
}

// luhn reports whether the last of the digits is the Luhn check digit of
// the others, the rule every card number follows: it catches any single
// mistyped digit and most swaps of two neighbours, before anything is
// stored or sent to the provider.
func luhn(digits string) bool {
	sum := 0
	for i := range len(digits) {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// cardSeparators drops the spaces and dashes people type in card numbers.
// Built once: a Replacer builds its tables on first use, which showed in the
// CPU profile of every order when it was made per call.
var cardSeparators = strings.NewReplacer(" ", "", "-", "")
