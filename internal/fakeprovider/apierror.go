package fakeprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Error types, as a Stripe client would switch on them.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuthentication = "authentication_error"
	typeIdempotency    = "idempotency_error"
	typeCard           = "card_error"
	typeAPI            = "api_error"
)

// apiError is an answer in the provider's error shape,
// {"error":{"type":…,"code":…,"message":…}}. Handlers return it as an error
// and renderErrors writes it.
type apiError struct {
	Status  int    `json:"-"`
	Type    string `json:"type"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
	Charge  string `json:"charge,omitempty"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}

func invalidRequest(code, param, message string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: code, Param: param, Message: message}
}

// errorBody marshals e inside its {"error": …} envelope.
func errorBody(e *apiError) []byte {
	b, err := json.Marshal(struct {
		Error *apiError `json:"error"`
	}{e})
	if err != nil {
		// Strings and ints always marshal.
		panic(fmt.Sprintf("marshal api error: %v", err))
	}
	return b
}

// renderErrors turns whatever a handler of the group returns into an answer
// in the provider's shape, so that the application's own error handler, which
// speaks problem+json, never answers for the provider.
func (p *Provider) renderErrors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil {
			return nil
		}
		req := c.Request()
		if c.Response().Committed {
			p.log.WarnContext(req.Context(), "fakeprovider: error after response was written",
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
			if he.Code == http.StatusNotFound {
				ae.Code = "route_not_found"
			}
		case errors.Is(err, context.Canceled) && req.Context().Err() != nil:
			// The client hung up; nobody is left to read an answer.
			p.log.DebugContext(req.Context(), "fakeprovider: client went away",
				"method", req.Method, "path", req.URL.Path)
			return nil
		default:
			p.log.ErrorContext(req.Context(), "fakeprovider: internal error",
				"method", req.Method, "path", req.URL.Path, "err", err)
			ae = &apiError{Status: http.StatusInternalServerError, Type: typeAPI, Message: "An internal error occurred."}
		}
		return c.JSONBlob(ae.Status, errorBody(ae))
	}
}
