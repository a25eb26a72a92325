package outbox

import "github.com/google/uuid"

// OrderPlaced is the "order placed" event, the arguments of every job
// FinishOrder enqueues: which order, of whom. The consumers read the order
// itself from the database, which is the truth, rather than a copy of it
// in the job. The order id is the event's id: one order is placed once.
type OrderPlaced struct {
	CustomerID uuid.UUID `json:"customer_id"`
	OrderID    uuid.UUID `json:"order_id"`
}

// The kinds of the jobs an order placed event becomes, one per consumer.
const (
	LoyaltyKind = "loyalty_points"
	MailKind    = "order_confirmation_mail"
)

// OrderPlacedKinds are the kinds FinishOrder inserts for every new order
// (its job_kinds parameter): adding a consumer is adding its kind here and
// its worker in Workers.
var OrderPlacedKinds = []string{LoyaltyKind, MailKind}

// LoyaltyArgs is the loyalty consumer's job.
type LoyaltyArgs struct{ OrderPlaced }

// Kind is River's name for the job, stored in river_job.kind.
func (LoyaltyArgs) Kind() string { return LoyaltyKind }

// MailArgs is the confirmation mail consumer's job.
type MailArgs struct{ OrderPlaced }

// Kind is River's name for the job, stored in river_job.kind.
func (MailArgs) Kind() string { return MailKind }

// OrderRefunded is the event of a refund that went through: its jobs'
// arguments, which EnqueueRefundJobs writes (queries/refunds.sql).
type OrderRefunded struct {
	CustomerID uuid.UUID `json:"customer_id"`
	OrderID    uuid.UUID `json:"order_id"`
	RefundID   uuid.UUID `json:"refund_id"`
}

// The consumers of a refund: the loyalty ledger's reversal and the mail.
const (
	LoyaltyReversalKind = "loyalty_reversal"
	RefundMailKind      = "refund_mail"
)

// OrderRefundedKinds are the kinds the finish of a refund inserts.
var OrderRefundedKinds = []string{LoyaltyReversalKind, RefundMailKind}

// LoyaltyReversalArgs is the loyalty reversal's job.
type LoyaltyReversalArgs struct{ OrderRefunded }

// Kind is River's name for the job, stored in river_job.kind.
func (LoyaltyReversalArgs) Kind() string { return LoyaltyReversalKind }

// RefundMailArgs is the refund mail's job.
type RefundMailArgs struct{ OrderRefunded }

// Kind is River's name for the job, stored in river_job.kind.
func (RefundMailArgs) Kind() string { return RefundMailKind }
