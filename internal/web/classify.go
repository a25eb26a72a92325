package web

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
func Classify(err error) *Failure {
	var (
		f           *Failure
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
		return &Failure{Kind: problem.Unavailable, Detail: "the database cannot be reached; retry shortly", RetryAfter: databaseRetryAfter}
	case errors.As(err, &badPickup):
		return &Failure{Kind: problem.InvalidRequest, Detail: badPickup.Field + ": " + badPickup.Reason, Reason: badPickup.Reason}
	case errors.As(err, &invalidCart):
		return &Failure{Kind: problem.InvalidRequest, Detail: invalidCart.Reason, Reason: invalidCart.Reason}
	case errors.As(err, &invalid):
		return &Failure{Kind: problem.InvalidRequest, Detail: invalid.Reason, Reason: invalid.Reason}
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
	case errors.As(err, &price):
		return Fail(problem.PriceChanged, "the order does not cost the amount expected")
	case errors.Is(err, idem.ErrFormKeyMissing), errors.Is(err, idem.ErrFormKeyForeign), errors.Is(err, idem.ErrFormKeyExpired):
		return Fail(problem.FormRefused, "")
	case errors.Is(err, idem.ErrMissingKey):
		return Fail(problem.MissingKey, "send an Idempotency-Key header with a unique value per operation")
	case errors.Is(err, idem.ErrBadKey):
		return Fail(problem.InvalidKey, idem.KeyProblem(err))
	case errors.As(err, &tooLarge):
		return &Failure{Kind: problem.InvalidRequest, Detail: tooLarge.Error(), Reason: "what was sent is larger than any order can be"}
	case errors.Is(err, idem.ErrIncompleteBody):
		return Fail(problem.RequestTimeout, "the body did not arrive whole in time")
	case errors.Is(err, idem.ErrMismatch):
		return Fail(problem.KeyReused, "this Idempotency-Key was first sent with a different method, route or body")
	case errors.Is(err, idem.ErrInProgress):
		// The kit says when asking again is useful (1 to 5 s).
		wait := time.Second
		if errors.As(err, &inProgress) && inProgress.RetryAfter > 0 {
			wait = inProgress.RetryAfter
		}
		return &Failure{Kind: problem.KeyInUse, Detail: "an earlier request with this Idempotency-Key has not finished yet", RetryAfter: wait}
	case errors.Is(err, idem.ErrNotCommitted):
		// The write's COMMIT failed after the key was finished in it:
		// nothing was stored and the kit freed the key.
		return &Failure{Kind: problem.Unavailable, Detail: "the write did not commit and nothing was stored; retry with the same key", RetryAfter: time.Second}
	case errors.Is(err, idem.ErrNoResponse):
		return Fail(problem.Internal, "the handler wrote no response; the key is freed, retry is safe")
	case errors.Is(err, idem.ErrLockLost):
		return &Failure{Kind: problem.LockLost, Detail: "a newer attempt with this Idempotency-Key took the operation over", RetryAfter: time.Second}
	case errors.As(err, &abandoned):
		return &Failure{Kind: problem.ShuttingDown, Detail: "the server stopped before this request finished", RetryAfter: abandoned.RetryAfter}
	case errors.As(err, &unknown):
		return &Failure{Kind: outcomeKind(unknown.Reason), Detail: "the outcome of the payment is not known yet", RetryAfter: unknown.RetryAfter}
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusNotFound:
			return Fail(problem.NotFound, "no such route")
		case http.StatusMethodNotAllowed:
			return Fail(problem.MethodNotAllowed, "")
		case http.StatusRequestEntityTooLarge:
			return &Failure{Kind: problem.InvalidRequest, Detail: "the body is too large", Reason: "what was sent is larger than any order can be"}
		}
	}
	return Fail(problem.Internal, "")
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
