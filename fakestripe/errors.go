package fakestripe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Error types, as Stripe names them.
const (
	typeInvalidRequest = "invalid_request_error"
	typeIdempotency    = "idempotency_error"
	typeCard           = "card_error"
	typeAPI            = "api_error"
)

// apiError is an answer in Stripe's error shape, {"error":{"type":…,…}}.
// Handlers return it as an error and renderErrors writes it.
type apiError struct {
	Status        int             `json:"-"`
	Type          string          `json:"type"`
	Code          string          `json:"code,omitempty"`
	DeclineCode   string          `json:"decline_code,omitempty"`
	Message       string          `json:"message"`
	Param         string          `json:"param,omitempty"`
	Charge        string          `json:"charge,omitempty"`
	PaymentIntent json.RawMessage `json:"payment_intent,omitempty"`
	RequestLogURL string          `json:"request_log_url,omitempty"`
	// shouldRetry sets Stripe-Should-Retry on the answer.
	shouldRetry string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}

func invalidRequest(code, param, message string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: code, Param: param, Message: message}
}

func missing(param, what, id string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_missing", Param: param,
		Message: fmt.Sprintf("No such %s: '%s'", what, id)}
}

// body marshals e inside its {"error": …} envelope.
func (e *apiError) body() []byte {
	b, err := json.Marshal(struct {
		Error *apiError `json:"error"`
	}{e})
	if err != nil {
		panic(fmt.Sprintf("marshal api error: %v", err)) // strings and raw JSON always marshal
	}
	return b
}

// renderErrors gives every answer a Request-Id, as Stripe does, and turns
// whatever a handler returns into an answer in Stripe's shape, so that the
// shop's own error handler, which speaks problem+json, never answers for
// the provider.
func (p *Provider) renderErrors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Request-Id", newID("req_"))
		err := next(c)
		if err == nil {
			return nil
		}
		req := c.Request()
		if c.Response().Committed {
			p.log.WarnContext(req.Context(), "fakestripe: error after the answer was written",
				"method", req.Method, "path", req.URL.Path, "err", err)
			return nil
		}
		var ae *apiError
		var he *echo.HTTPError
		switch {
		case errors.As(err, &ae):
		case errors.As(err, &he):
			// Routing errors: unknown path, wrong method.
			ae = &apiError{Status: he.Code, Type: typeInvalidRequest, Message: http.StatusText(he.Code)}
		case errors.Is(err, context.Canceled) && req.Context().Err() != nil:
			// The client hung up; nobody is left to read an answer.
			return nil
		default:
			p.log.ErrorContext(req.Context(), "fakestripe: internal error",
				"method", req.Method, "path", req.URL.Path, "err", err)
			ae = &apiError{Status: http.StatusInternalServerError, Type: typeAPI, Message: "An unknown error occurred."}
		}
		if ae.shouldRetry != "" {
			c.Response().Header().Set("Stripe-Should-Retry", ae.shouldRetry)
		}
		return c.JSONBlob(ae.Status, ae.body())
	}
}

// newID returns prefix and 24 random hex digits, the shape of Stripe's ids.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + hex.EncodeToString(b[:])
}
