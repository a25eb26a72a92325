package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/refund"
)

// Classify maps every error the handlers, the engine and the kit return
// onto its row of the error table. It is the only such mapping: the JSON
// writer and the page writer both start from its answer, so the API and
// the pages cannot disagree about what an error is.
//
// The table has two parts. The kit's refusals (a reused key, one in
// progress, a missing one…) are answered as the kit answers them
// (idem.RefusalOf: the status, the type, the detail and the Retry-After),
// under the shop's row for them (problem.OfKit); the engine's own errors
// for those are the kit's (checkout.ErrKeyReused is idem.ErrMismatch), so
// they need no row here. What follows is only the shop's part: its own
// errors. Anything neither knows is Internal, whose words never include
// the error's text.
func Classify(err error) *Failure {
	if f, ok := errors.AsType[*Failure](err); ok {
		return f
	}
	if errors.Is(err, database.ErrSerialization) {
		// Not an outage, and the client is not told it was one.
		return &Failure{Kind: problem.Unavailable, RetryAfter: databaseRetryAfter,
			Detail: "the database rolled this request back in a conflict with a concurrent one; retry shortly"}
	}
	if databaseUnavailable(err) {
		return &Failure{Kind: problem.Unavailable, Detail: "the database cannot be reached; retry shortly", RetryAfter: databaseRetryAfter}
	}
	if f := shopFailure(err); f != nil {
		return f
	}
	if r, ok := idem.RefusalOf(err); ok {
		f := &Failure{Kind: problem.OfKit(r), Detail: r.Detail, RetryAfter: r.RetryAfter}
		if f.Kind == problem.InvalidRequest {
			f.Reason = tooLarge
		}
		return f
	}
	if he, ok := errors.AsType[*echo.HTTPError](err); ok {
		switch he.Code {
		case http.StatusNotFound:
			return Fail(problem.NotFound, "no such route")
		case http.StatusMethodNotAllowed:
			return Fail(problem.MethodNotAllowed, "")
		case http.StatusRequestEntityTooLarge:
			return &Failure{Kind: problem.InvalidRequest, Detail: "the body is too large", Reason: tooLarge}
		}
	}
	return Fail(problem.Internal, "")
}

// tooLarge is what a shopper is told of a body larger than any order.
const tooLarge = "what was sent is larger than any order can be"

// shopFailure is the shop's part of the table: the errors of its own
// domain (carts, pickups, the catalog, the order engine), or nil.
func shopFailure(err error) *Failure {
	var (
		invalid     *checkout.InvalidOrderError
		unknown     *checkout.OutcomeUnknownError
		abandoned   *checkout.AbandonedError
		ordered     *checkout.CartOrderedError
		price       *checkout.PriceChangedError
		soldOut     *checkout.SoldOutError
		invalidCart *catalog.InvalidCartError
		badPickup   *pickup.InvalidError
		exceeds     *refund.ExceedsError
		window      *refund.WindowClosedError
		pending     *refund.OutcomeUnknownError
	)
	switch {
	case errors.Is(err, refund.ErrNotFound):
		return Fail(problem.NotFound, "no such order")
	case errors.Is(err, refund.ErrCancelled):
		return Fail(problem.OrderCancelled, err.Error())
	case errors.As(err, &window):
		return Fail(problem.CancelWindowClosed, window.Error())
	case errors.As(err, &exceeds):
		return &Failure{Kind: problem.RefundExceeds, Detail: exceeds.Error(), Left: &exceeds.Left}
	case errors.As(err, &pending):
		return &Failure{Kind: problem.RefundPending, Detail: "the payment provider has not confirmed the refund yet", RetryAfter: pending.RetryAfter}
	case errors.As(err, &badPickup):
		return &Failure{Kind: problem.InvalidRequest, Detail: badPickup.Field + ": " + badPickup.Reason, Reason: badPickup.Reason,
			Errors: problem.At("/"+badPickup.Field, badPickup.Reason)}
	case errors.As(err, &invalidCart):
		return &Failure{Kind: problem.InvalidRequest, Detail: invalidCart.Reason, Reason: invalidCart.Reason,
			Errors: problem.At(invalidCart.Pointer, invalidCart.Reason)}
	case errors.As(err, &invalid):
		return &Failure{Kind: problem.InvalidRequest, Detail: invalid.Reason, Reason: invalid.Reason,
			Errors: problem.At(invalid.Pointer, invalid.Reason)}
	case errors.Is(err, pickup.ErrNotFound):
		return Fail(problem.NotFound, "no such reservation")
	case errors.Is(err, cart.ErrNotFound):
		return Fail(problem.NotFound, "no such cart")
	case errors.As(err, &ordered):
		return Fail(problem.CartOrdered, "this cart was ordered as order "+ordered.OrderID.String())
	case errors.Is(err, cart.ErrOrdered):
		return Fail(problem.CartOrdered, "this cart has been ordered")
	case errors.Is(err, checkout.ErrCartChanged):
		return Fail(problem.CartChanged, "the cart changed while the order was being placed")
	case errors.As(err, &soldOut):
		f := &Failure{Kind: problem.SoldOut, Detail: soldOut.Error(), Reason: soldOut.Reasons()}
		for _, s := range soldOut.Short {
			f.Errors = append(f.Errors, problem.At("/items", s.Reason())...)
		}
		return f
	case errors.As(err, &price):
		return Fail(problem.PriceChanged, "the order does not cost the amount expected")
	case errors.As(err, &abandoned):
		return &Failure{Kind: problem.ShuttingDown, Detail: "the server stopped before this request finished", RetryAfter: abandoned.RetryAfter}
	case errors.As(err, &unknown):
		return &Failure{Kind: outcomeKind(unknown.Reason), Detail: "the outcome of the payment is not known yet", RetryAfter: unknown.RetryAfter}
	}
	return nil
}

// outcomeKind words a payment whose outcome is unknown by why: the
// provider was never reached (503, nothing charged), did not answer in
// time (504), or failed mid-call (502). All three are retried with the
// same key.
func outcomeKind(r payment.Reason) problem.Kind {
	switch r {
	case payment.ReasonTimeout:
		return problem.ProviderTimeout
	case payment.ReasonUnreachable:
		return problem.ProviderUnavailable
	}
	return problem.OutcomeUnknown
}
