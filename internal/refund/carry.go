package refund

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/outbox"
	"exactlyonce/internal/payment"
)

// retryAfter is what a client whose refund's outcome is unknown is told to
// wait: the key's lease is ended already, so a retry resumes it at once.
const retryAfter = 2 * time.Second

// payload is kept with a refund's key, for the completer.
type payload struct {
	Ask Ask `json:"ask"`
}

// Do runs a refund at most once per key and returns its answer (Replayed
// when it is another request's), or a refusal (nothing reserved; the key is
// free again), *OutcomeUnknownError, or the kit's errors (a key in
// progress, reused for another ask, or taken over).
func (s *Service) Do(ctx context.Context, r idem.Request, wait time.Duration, ask Ask) (idem.Outcome, error) {
	answer, ok := s.answers[ask.Channel]
	if !ok {
		return idem.Outcome{}, fmt.Errorf("refund: no answer for channel %q", ask.Channel)
	}
	p, err := json.Marshal(payload{Ask: ask})
	if err != nil {
		return idem.Outcome{}, fmt.Errorf("refund payload: %w", err)
	}
	r.Payload = p
	c, err := s.keys.ClaimOrAwait(ctx, r, wait)
	if err != nil {
		return idem.Outcome{}, database.Translate(err)
	}
	if c.Replay != nil {
		return idem.Outcome{Response: *c.Replay, Replayed: true}, nil
	}
	resp, err := s.run(ctx, c.Lock, ask, answer)
	return idem.Outcome{Response: resp}, err
}

// run carries a claimed key through reserve, provider call and finish. The
// work goes on when the client goes away, within one lease.
func (s *Service) run(ctx context.Context, l *idem.Lock, ask Ask, answer Answer) (idem.Response, error) {
	bounded, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Lease)
	defer cancel()
	held, stop := l.Keep(bounded)
	defer stop()
	background := context.WithoutCancel(ctx)
	res, err := s.reserve(held, l, ask)
	if cause := context.Cause(held); err != nil && (errors.Is(cause, idem.ErrLockLost) || errors.Is(cause, idem.ErrLeaseLapsing)) {
		// The kit's fence stopped the reservation (its heartbeat found the
		// key taken over, or could not renew the lease): nothing was
		// reserved by this attempt, and another has the key or may soon.
		// The lease is ended so that the retry takes it over at once.
		stop()
		_ = l.Expire(background)
		return idem.Response{}, idem.ErrLockLost
	}
	switch {
	case refusal(err):
		// Nothing reserved, nothing asked of the provider: the key is
		// given up, and the corrected ask may use it.
		if rerr := l.Release(background); rerr != nil {
			return idem.Response{}, database.Translate(rerr)
		}
		return idem.Response{}, err
	case errors.Is(err, idem.ErrLockLost):
		return idem.Response{}, err
	case err != nil:
		// Whether the reservation committed is not known: the key stays
		// started, and whoever takes it over finds the row or makes it.
		stop()
		_ = l.Expire(background)
		return idem.Response{}, err
	}
	return s.carry(held, background, l, res, answer, stop)
}

// carry asks the provider for a reserved refund and finishes the key with
// the outcome, or, when the outcome is unknown, ends the lease and reports
// it. stop ends the lease keeper.
func (s *Service) carry(held, background context.Context, l *idem.Lock, res reserved, answer Answer, stop func()) (idem.Response, error) {
	row := res.row
	if h := s.cfg.Hooks.AfterReserve; h != nil {
		h(held, Refund{ID: row.ID, CustomerID: row.CustomerID, OrderID: row.OrderID, Kind: row.Kind, Amount: row.Amount,
			Currency: res.currency, State: row.State})
	}
	pr, err := s.payments.RefundAmount(held, payment.RefundRequest{
		IdempotencyKey: ProviderKey(row.ID), IntentID: res.intentID, Amount: row.Amount,
		Reason: providerReason(row.Kind), Metadata: map[string]string{
			"refund_id": row.ID.String(), "order_id": row.OrderID.String(), "customer_id": row.CustomerID.String(), "kind": row.Kind},
	})
	failure := ""
	switch {
	case err == nil:
	case errors.Is(err, payment.ErrAlreadyRefunded):
		failure = "the payment provider says the charge is refunded in full already"
	default:
		pe, refused := errors.AsType[*payment.ProviderError](err)
		if !refused || pe.Transient() {
			stop()
			_ = l.Expire(background)
			return idem.Response{}, &OutcomeUnknownError{RetryAfter: retryAfter, Err: err}
		}
		failure = "the payment provider refused the refund: " + pe.Message
	}
	stop()
	refund := Refund{ID: row.ID, CustomerID: row.CustomerID, OrderID: row.OrderID, Kind: row.Kind, Amount: row.Amount,
		Currency: res.currency, State: "refunded", ProviderRefundID: pr.ID}
	if failure != "" {
		refund.State, refund.ProviderRefundID, refund.Failure = "failed", "", failure
	}
	if h := s.cfg.Hooks.BeforeFinish; h != nil {
		h(background, refund)
	}
	resp := answer(refund)
	err = s.db.InJobTx(background, func(tx pgx.Tx, q *db.Queries) error {
		return s.finish(background, tx, q, l, refund, resp)
	})
	if err != nil {
		return idem.Response{}, database.Translate(err)
	}
	return resp, nil
}

// finish records the outcome and stores the answer, in tx: the kit's
// FinishTx is fenced by the lock token, so a stale attempt's writes roll
// back with its refused finish.
func (s *Service) finish(ctx context.Context, tx pgx.Tx, q *db.Queries, l *idem.Lock, r Refund, resp idem.Response) error {
	// A row no longer pending was ended by another attempt that took the
	// key over while this one stalled: this one is superseded, as its
	// fenced finish would say.
	if r.State == "failed" {
		_, err := q.MarkRefundFailed(ctx, db.MarkRefundFailedParams{Scope: l.Scope, Key: l.Key, Failure: &r.Failure})
		if errors.Is(err, database.ErrNotFound) {
			return idem.ErrLockLost
		}
		if err != nil {
			return fmt.Errorf("mark refund failed: %w", err)
		}
		return l.FinishTx(ctx, tx, resp)
	}
	_, err := q.MarkRefunded(ctx, db.MarkRefundedParams{Scope: l.Scope, Key: l.Key, ProviderRefundID: &r.ProviderRefundID})
	if errors.Is(err, database.ErrNotFound) {
		return idem.ErrLockLost
	}
	if err != nil {
		return fmt.Errorf("mark refunded: %w", err)
	}
	if r.Kind == KindCancel {
		if err := q.CancelOrder(ctx, db.CancelOrderParams{CustomerID: r.CustomerID, OrderID: r.OrderID}); err != nil {
			return fmt.Errorf("cancel order: %w", err)
		}
	}
	if err := q.EnqueueRefundJobs(ctx, db.EnqueueRefundJobsParams{CustomerID: r.CustomerID, OrderID: r.OrderID,
		RefundID: r.ID, JobKinds: outbox.OrderRefundedKinds}); err != nil {
		return fmt.Errorf("enqueue refund jobs: %w", err)
	}
	return l.FinishTx(ctx, tx, resp)
}

// providerReason is Stripe's reason for a refund of kind.
func providerReason(kind string) string {
	if kind == KindCancel {
		return "requested_by_customer"
	}
	return ""
}
