package fakestripe

// A test PaymentMethod the fake knows, and what a confirm with it does.
type testCard struct {
	declineCode string // "" for a card that does not decline
	last4       string
	// action: the bank asks for 3-D Secure, so a confirm leaves the
	// intent requires_action with a next_action, charging nothing, as
	// Stripe's authentication-required test cards do.
	action bool
	// processing: the confirm leaves the intent processing; it moves on
	// later (Behaviour.ProcessingFor, or MoveOn).
	processing bool
}

// Stripe's test PaymentMethods the fake knows, and what a confirm with each
// does. The shop sends these ids, never a card number: Stripe's API takes a
// card number only from Stripe.js or Elements in the shopper's browser.
var testPaymentMethods = map[string]testCard{
	"pm_card_visa":                            {last4: "4242"},
	"pm_card_visa_debit":                      {last4: "5556"},
	"pm_card_mastercard":                      {last4: "4444"},
	"pm_card_amex":                            {last4: "8431"},
	"pm_card_chargeDeclined":                  {declineCode: "generic_decline", last4: "0002"},
	"pm_card_chargeDeclinedInsufficientFunds": {declineCode: "insufficient_funds", last4: "9995"},
	// 4000 0027 6000 3184 and 4000 0025 0000 3155: Stripe asks for 3-D
	// Secure on every on-session payment with them.
	"pm_card_authenticationRequired":        {last4: "3184", action: true},
	"pm_card_authenticationRequiredOnSetup": {last4: "3155", action: true},
	// ProcessingPaymentMethod is the fake's own, not Stripe's.
	ProcessingPaymentMethod: {last4: "4242", processing: true},
}

// DeclinedPaymentMethod is the test PaymentMethod that is always declined.
const DeclinedPaymentMethod = "pm_card_chargeDeclined"

// ActionPaymentMethod is Stripe's test PaymentMethod that always asks for
// 3-D Secure: a confirm leaves the intent requires_action.
const ActionPaymentMethod = "pm_card_authenticationRequired"

// ProcessingPaymentMethod is a PaymentMethod only the fake knows (Stripe
// would answer it 400 resource_missing): a confirm with it leaves the
// intent processing, as a slow payment method's does at Stripe. Stripe has
// no test card that stays processing (cards settle at once), so the fake
// makes one up to let the shop meet the status; the intent succeeds when
// it moves on.
const ProcessingPaymentMethod = "pm_card_processing"
