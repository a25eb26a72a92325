package handlers

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/problem"
)

// apiError is an error a handler returns to answer with a given problem.
type apiError struct {
	kind       problem.Kind
	detail     string
	retryAfter time.Duration
}

func (e *apiError) Error() string { return e.kind.Title + ": " + e.detail }

func newAPIError(kind problem.Kind, detail string) *apiError {
	return &apiError{kind: kind, detail: detail}
}

// handleError is the one place errors become responses. Client errors are
// logged as warnings, everything else as an error with the request id;
// users never see the text of an unexpected error. Machine clients get
// problem+json; every other path is a page a person sees, and gets one
// (page_errors.go).
func (h *Handler) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := toAPIError(err)
	log := h.log.With("request_id", c.Response().Header().Get(echo.HeaderXRequestID),
		"method", c.Request().Method, "route", c.Path())
	if ae.kind.Status >= 500 {
		log.Error("request failed", "status", ae.kind.Status, "err", err)
	} else {
		log.Warn("request refused", "status", ae.kind.Status, "problem", ae.kind.Slug)
	}
	if ae.retryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(ae.retryAfter)))
	}
	if ae.kind.Status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="api"`)
	}
	p := ae.kind.New(ae.detail)
	if err := c.Blob(p.Status, problem.ContentType, p.JSON()); err != nil {
		log.Error("write error response", "err", err)
	}
}

// toAPIError maps every error the handlers and the engine return onto a problem.
func toAPIError(err error) *apiError {
	var (
		ae          *apiError
		invalid     *checkout.InvalidOrderError
		inProgress  *checkout.InProgressError
		provider    *checkout.OutcomeUnknownError
		abandoned   *checkout.AbandonedError
		he          *echo.HTTPError
		ordered     *checkout.CartOrderedError
		invalidCart *catalog.InvalidCartError
		badPickup   *pickup.InvalidError
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case databaseUnavailable(err):
		return &apiError{kind: problem.Unavailable, detail: "the database cannot be reached; retry shortly", retryAfter: databaseRetryAfter}
	case errors.As(err, &badPickup):
		return newAPIError(problem.InvalidRequest, badPickup.Reason)
	case errors.Is(err, pickup.ErrNotFound):
		return newAPIError(problem.NotFound, "no such reservation")
	case errors.Is(err, cart.ErrNotFound):
		return newAPIError(problem.NotFound, "no such cart")
	case errors.Is(err, cart.ErrOrdered):
		return newAPIError(problem.CartOrdered, "this cart has been ordered")
	case errors.As(err, &ordered):
		return newAPIError(problem.CartOrdered, "this cart was ordered as order "+ordered.OrderID.String())
	case errors.Is(err, checkout.ErrCartChanged):
		return newAPIError(problem.CartChanged, "the cart changed while the order was being placed")
	case errors.As(err, &invalidCart):
		return newAPIError(problem.InvalidRequest, invalidCart.Reason)
	case errors.As(err, &invalid):
		return newAPIError(problem.InvalidRequest, invalid.Reason)
	case errors.Is(err, checkout.ErrKeyReused):
		return newAPIError(problem.KeyReused, "this Idempotency-Key was first sent with a different method, route or body")
	case errors.As(err, &inProgress):
		return &apiError{kind: problem.KeyInUse, detail: "an earlier request with this Idempotency-Key has not finished yet", retryAfter: inProgress.RetryAfter}
	case errors.Is(err, checkout.ErrLockLost):
		return &apiError{kind: problem.LockLost, detail: "a newer attempt with this Idempotency-Key took the operation over", retryAfter: time.Second}
	case errors.As(err, &abandoned):
		return &apiError{kind: problem.ShuttingDown, detail: "the server stopped before this request finished", retryAfter: abandoned.RetryAfter}
	case errors.As(err, &provider):
		kind := problem.ProviderFailed
		switch provider.Reason {
		case payment.ReasonTimeout:
			kind = problem.ProviderTimeout
		case payment.ReasonUnreachable:
			kind = problem.ProviderUnavailable
		}
		return &apiError{kind: kind, detail: "the outcome of the payment is not known yet", retryAfter: provider.RetryAfter}
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusNotFound:
			return newAPIError(problem.NotFound, "no such route")
		case http.StatusMethodNotAllowed:
			return newAPIError(problem.MethodNotAllowed, "")
		case http.StatusRequestEntityTooLarge:
			return newAPIError(problem.InvalidRequest, "the body is too large")
		}
	}
	return newAPIError(problem.Internal, "")
}

// retryAfterSeconds rounds up: telling a client to come back before the lock
// expires only earns it another 409.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// databaseRetryAfter is what a client is told to wait while the database is
// out of reach: long enough for a restart to make progress, short enough
// that a client is not kept away once it is back.
const databaseRetryAfter = 2 * time.Second

// databaseUnavailable reports whether err is an outage of the database
// (translated once, by package database) rather than a fault of the request
// or of the code: it passes by itself, so it is a 503, never a 500. A
// serialization failure that outlived InTx's retries is answered the same
// way, as running the request again may succeed.
func databaseUnavailable(err error) bool {
	return errors.Is(err, database.ErrUnavailable) || errors.Is(err, database.ErrSerialization)
}
