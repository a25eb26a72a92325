package views

import "exactlyonce/idem"

// AdminFind is the admin listener's /orders: the search an operator makes
// from what a customer quotes, what it found, and the items waiting for
// someone.
type AdminFind struct {
	// Query is what was asked, as typed; Said is how it was read ("an
	// order number", "a PaymentIntent", …), or why nothing could be.
	Query, Said string
	Orders      []FoundOrder
	Customers   []FoundCustomer
	// Key is a key found by its PaymentIntent when no order holds it.
	Key *FoundKey
	// Attention counts and lists what waits, shown without a query.
	Attention Attention
}

// FoundOrder is one order in a list, with the way to its page.
type FoundOrder struct {
	Number, ID, Href, Customer, CustomerName, Amount, Intent, Created string
}

// FoundCustomer is a customer whose name matched, with the way to their
// orders.
type FoundCustomer struct {
	ID, Name, Href, Created string
	Orders                  int64
}

// FoundKey is an order key with no order: its customer, key and how it
// stands.
type FoundKey struct {
	Customer, Key, Status, Answer, Created, TracesHref string
}

// Attention is what waits for the shop or an operator, counted, with the
// latest of each.
type Attention struct {
	Stuck, Parked, Awaiting, Refunded, Foreign, Refused int64
	Keys                                                []WaitingKey
	Refunds                                             []MadeRefund
}

// WaitingKey is a started key past its lock, parked, or awaiting the
// shopper's bank.
type WaitingKey struct {
	Customer, Key, State, Intent, Created, LockedUntil, TracesHref string
	SettleAttempts                                                 int32
}

// MadeRefund is one refund the reconciler made.
type MadeRefund struct {
	Intent, Refund, Amount, Customer, Key, At string
	// LostOperation: the charge was of an operation whose key was lost.
	LostOperation bool
}

// AdminOrder is the admin listener's /orders/{id}: one order and
// everything the shop knows of it.
type AdminOrder struct {
	Number, ID, Customer, CustomerName, Amount, Created, Intent string
	Lines                                                       []Line
	// The key: "" Status when the sweeper has deleted it.
	Key, KeyStatus, KeyAnswer, KeyCreated, KeyFinished, ProviderKey, Cart string
	KeyParked                                                             string
	Trail                                                                 []TrailEvent
	TracesHref                                                            string
	Events                                                                []IntentEvent
	Refunds                                                               []MadeRefund
	Jobs                                                                  []OrderJob
	Mails                                                                 []OrderMail
	// Points is the loyalty award, "" before the job ran.
	Points string
	// OrderRefunds are the shop's refunds of the order (cancels and the
	// operators'); Refund is the form that refunds more, and RefundOutcome
	// how the refund just sent ended ("refunded", "failed", or "").
	OrderRefunds  []AdminOrderRefund
	Cancelled     string
	Refund        *AdminRefundForm
	RefundOutcome string
}

// AdminOrderRefund is one refund of the order, as the operator sees it.
type AdminOrderRefund struct{ ID, Kind, Amount, State, Reason, ProviderRefund, Failure, At string }

// AdminRefundForm refunds part of an order; its key is minted when the
// page is rendered. NeedsToken says the listener has no ADMIN_TOKEN, and so
// refunds nothing.
type AdminRefundForm struct {
	Action     string
	Key        idem.FormKey
	NeedsToken bool
}

// TrailEvent is one line of a key's audit trail.
type TrailEvent struct{ Event, At, Detail string }

// IntentEvent is one webhook event the shop received about the order's
// PaymentIntent, and what it did with it.
type IntentEvent struct{ ID, Type, Effect, At string }

// OrderJob is one outbox job of the order.
type OrderJob struct {
	ID, Kind, State, Attempts, Created, Finalized, LastError string
}

// OrderMail is the order's confirmation, as recorded sent.
type OrderMail struct{ MessageID, To, Sent string }
