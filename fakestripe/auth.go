package fakestripe

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

var errUnauthenticated = &apiError{
	Status:  http.StatusUnauthorized,
	Type:    typeInvalidRequest,
	Message: "Invalid API Key provided.",
}

// authenticate admits requests carrying "Authorization: Bearer <secret>",
// which is how the SDK sends the secret key.
func (p *Provider) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		header := c.Request().Header.Get("Authorization")
		const scheme = "bearer "
		// The scheme is case-insensitive (RFC 9110 section 11.1).
		if len(header) < len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="Stripe"`)
			return errUnauthenticated
		}
		sum := sha256.Sum256([]byte(header[len(scheme):]))
		if p.noSecret || subtle.ConstantTimeCompare(sum[:], p.secretSum[:]) != 1 {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="Stripe"`)
			return errUnauthenticated
		}
		return next(c)
	}
}
