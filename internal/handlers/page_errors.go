package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/pickup"
	"exactlyonce/views"
)

// pageError is an error a page handler returns to answer with an error
// page: a status, and words for a shopper rather than a developer.
type pageError struct {
	status  int
	title   string
	message string
	action  views.Link
	// retryAfter, when set, is sent as Retry-After.
	retryAfter time.Duration
	// err is the cause, for the log.
	err error
}

func (e *pageError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("%d %s: %v", e.status, e.title, e.err)
	}
	return fmt.Sprintf("%d %s", e.status, e.title)
}

func (e *pageError) Unwrap() error { return e.err }

var (
	backToShop = views.Link{Href: "/", Label: "Go to the shop"}
	backToCart = views.Link{Href: "/cart", Label: "Back to your cart"}
	// newCheckout renders a fresh form, and so mints a new key: the way
	// out of every refusal that is final for the old one.
	newCheckout = views.Link{Href: "/checkout", Label: "Start a new checkout"}
	newPickup   = views.Link{Href: "/pickup", Label: "Open the pickup form again"}
)

func notFoundPage(what string) *pageError {
	return &pageError{status: http.StatusNotFound, title: "Not found",
		message: "There is no such " + what + ", or it is not yours.", action: backToShop}
}

// asPage makes a route part of the browser face: its errors, and those of
// the middleware after it, are answered with an HTML page (toPageError).
// Every other route answers machine clients, with problem+json
// (handleError): the audience is chosen per route group, not by URL.
func (h *Handler) asPage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := next(c); err != nil && !c.Response().Committed {
			h.handlePageError(err, c)
		}
		return nil
	}
}

// handlePageError is handleError for pages: the same logging, an HTML page.
func (h *Handler) handlePageError(err error, c echo.Context) {
	pe := toPageError(err)
	log := h.log.With("request_id", c.Response().Header().Get(echo.HeaderXRequestID),
		"method", c.Request().Method, "route", c.Path())
	if pe.status >= 500 {
		log.Error("request failed", "status", pe.status, "err", err)
	} else {
		log.Warn("request refused", "status", pe.status, "reason", pe.title)
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	if pe.retryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(pe.retryAfter)))
	}
	page := views.Error(views.ErrorPage{Status: pe.status, Title: pe.title, Message: pe.message, Action: pe.action})
	if rerr := render(c, pe.status, page); rerr != nil {
		log.Error("write error page", "err", rerr)
		// The page itself failed: a line of text is still an answer.
		_ = c.String(pe.status, strconv.Itoa(pe.status)+" "+pe.title)
	}
}

// toPageError maps every error a page handler and the engine return onto a
// page. The text of an unexpected error never reaches the shopper.
func toPageError(err error) *pageError {
	var (
		pe           *pageError
		ae           *apiError
		invalid      *checkout.InvalidOrderError
		invalidCart  *catalog.InvalidCartError
		priceChanged *checkout.PriceChangedError
		he           *echo.HTTPError
		badPickup    *pickup.InvalidError
	)
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.As(err, &ae):
		// Refusals shared by both audiences (a wrong host name, a quota)
		// are built as problems; a person gets them as a page.
		return &pageError{status: ae.kind.Status, title: ae.kind.Title, message: ae.kind.About, action: backToShop, retryAfter: ae.retryAfter, err: err}
	case databaseUnavailable(err):
		return &pageError{status: http.StatusServiceUnavailable, title: "Back in a moment",
			message: "The shop cannot reach its records right now. Please try again in a few seconds. If you were paying, sending the same form again is safe: it can never charge you twice.",
			action:  backToShop, retryAfter: databaseRetryAfter, err: err}
	case errors.As(err, &invalid):
		return cannotSell(invalid.Reason, err)
	case errors.As(err, &invalidCart):
		return cannotSell(invalidCart.Reason, err)
	case errors.As(err, &priceChanged):
		return &pageError{status: http.StatusConflict, title: "Prices have changed",
			message: "The total of your order is not the one this form showed, so nothing was charged. Check the new total and pay again.",
			action:  newCheckout, err: err}
	case errors.Is(err, pickup.ErrNotFound):
		return notFoundPage("reservation")
	case errors.As(err, &badPickup):
		return &pageError{status: http.StatusBadRequest, title: "This slot cannot be reserved",
			message: "The form asked for something the shop cannot reserve (" + badPickup.Reason + "). Nothing was reserved.",
			action:  newPickup, err: err}
	case errors.Is(err, idem.ErrFormKeyMissing), errors.Is(err, idem.ErrFormKeyForeign), errors.Is(err, idem.ErrFormKeyExpired):
		return &pageError{status: http.StatusBadRequest, title: "This form cannot be used",
			message: "This form is too old, was changed, or was made for another browser, so it was refused and nothing was reserved. Open the form again.",
			action:  newPickup, err: err}
	case errors.Is(err, idem.ErrMismatch): // checkout.ErrKeyReused is the same error
		return &pageError{status: http.StatusUnprocessableEntity, title: "This form was changed",
			message: "This form was already sent with other contents than it now carries, so it was refused and nothing more was charged or reserved. Open the form again to start anew.",
			action:  backToShop, err: err}
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusNotFound:
			return notFoundPage("page")
		case http.StatusMethodNotAllowed:
			return &pageError{status: he.Code, title: "Not allowed",
				message: "This page cannot be used that way.", action: backToShop}
		case http.StatusRequestEntityTooLarge:
			return &pageError{status: he.Code, title: "Form too large",
				message: "The form sent was larger than any order can be. Nothing was changed.", action: backToCart}
		}
	}
	return &pageError{status: http.StatusInternalServerError, title: "Something went wrong",
		message: "Something went wrong on our side and it has been logged. If you were paying, sending the same form again is safe: it can never charge you twice.",
		action:  backToShop, err: err}
}

// cannotSell is the page of a form that asks for something the catalog
// refuses, which a page of this shop never renders.
func cannotSell(reason string, err error) *pageError {
	return &pageError{status: http.StatusBadRequest, title: "This order cannot be placed",
		message: "The form asked for something the shop cannot sell (" + reason + "). Nothing was charged.",
		action:  backToCart, err: err}
}
