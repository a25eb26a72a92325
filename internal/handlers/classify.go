package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/problem"
)

// classify maps every error the handlers, the engine and the kit return
// onto its row of the error table. It is the only such mapping: the JSON
// writer and the page writer both start from its answer, so the API and
// the pages cannot disagree about what an error is. Anything it does not
// know is Internal, whose words never include the error's text.
func classify(err error) *failure {
	var (
		f           *failure
		invalid     *checkout.InvalidOrderError
		inProgress  *checkout.InProgressError
		unknown     *checkout.OutcomeUnknownError
		abandoned   *checkout.AbandonedError
		ordered     *checkout.CartOrderedError
		price       *checkout.PriceChangedError
		invalidCart *catalog.InvalidCartError
		badPickup   *pickup.InvalidError
		tooLarge    *idemhttp.TooLargeError
		he          *echo.HTTPError
	)
	switch {
	case errors.As(err, &f):
		return f
	case databaseUnavailable(err):
		return &failure{kind: problem.Unavailable, detail: "the database cannot be reached; retry shortly", retryAfter: databaseRetryAfter}
	case errors.As(err, &badPickup):
		return &failure{kind: problem.InvalidRequest, detail: badPickup.Field + ": " + badPickup.Reason, reason: badPickup.Reason}
	case errors.As(err, &invalidCart):
		return &failure{kind: problem.InvalidRequest, detail: invalidCart.Reason, reason: invalidCart.Reason}
	case errors.As(err, &invalid):
		return &failure{kind: problem.InvalidRequest, detail: invalid.Reason, reason: invalid.Reason}
	case errors.Is(err, pickup.ErrNotFound):
		return fail(problem.NotFound, "no such reservation")
	case errors.Is(err, cart.ErrNotFound):
		return fail(problem.NotFound, "no such cart")
	case errors.As(err, &ordered):
		return fail(problem.CartOrdered, "this cart was ordered as order "+ordered.OrderID.String())
	case errors.Is(err, cart.ErrOrdered):
		return fail(problem.CartOrdered, "this cart has been ordered")
	case errors.Is(err, checkout.ErrCartChanged):
		return fail(problem.CartChanged, "the cart changed while the order was being placed")
	case errors.As(err, &price):
		return fail(problem.PriceChanged, "the order does not cost the amount expected")
	case errors.Is(err, idem.ErrFormKeyMissing), errors.Is(err, idem.ErrFormKeyForeign), errors.Is(err, idem.ErrFormKeyExpired):
		return fail(problem.FormRefused, "")
	case errors.Is(err, idem.ErrMissingKey):
		return fail(problem.MissingKey, "send an Idempotency-Key header with a unique value per operation")
	case errors.Is(err, idem.ErrBadKey):
		return fail(problem.InvalidKey, idem.KeyProblem(err))
	case errors.As(err, &tooLarge):
		return &failure{kind: problem.InvalidRequest, detail: tooLarge.Error(), reason: "what was sent is larger than any order can be"}
	case errors.Is(err, idem.ErrIncompleteBody):
		return fail(problem.RequestTimeout, "the body did not arrive whole in time")
	case errors.Is(err, idem.ErrMismatch):
		return fail(problem.KeyReused, "this Idempotency-Key was first sent with a different method, route or body")
	case errors.Is(err, idem.ErrInProgress):
		// The kit says when asking again is useful (1 to 5 s).
		wait := time.Second
		if errors.As(err, &inProgress) && inProgress.RetryAfter > 0 {
			wait = inProgress.RetryAfter
		}
		return &failure{kind: problem.KeyInUse, detail: "an earlier request with this Idempotency-Key has not finished yet", retryAfter: wait}
	case errors.Is(err, idem.ErrLockLost):
		return &failure{kind: problem.LockLost, detail: "a newer attempt with this Idempotency-Key took the operation over", retryAfter: time.Second}
	case errors.As(err, &abandoned):
		return &failure{kind: problem.ShuttingDown, detail: "the server stopped before this request finished", retryAfter: abandoned.RetryAfter}
	case errors.As(err, &unknown):
		return &failure{kind: outcomeKind(unknown.Reason), detail: "the outcome of the payment is not known yet", retryAfter: unknown.RetryAfter}
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusNotFound:
			return fail(problem.NotFound, "no such route")
		case http.StatusMethodNotAllowed:
			return fail(problem.MethodNotAllowed, "")
		case http.StatusRequestEntityTooLarge:
			return &failure{kind: problem.InvalidRequest, detail: "the body is too large", reason: "what was sent is larger than any order can be"}
		}
	}
	return fail(problem.Internal, "")
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
