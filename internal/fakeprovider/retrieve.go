package fakeprovider

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/fakeprovider/providerdb"
)

// chargeByKey serves GET /v1/charges?idempotency_key=K. It is how a client
// that lost the answer to a create-charge call learns whether it charged,
// without risking a second charge.
func (p *Provider) chargeByKey(c echo.Context) error {
	key := c.QueryParam("idempotency_key")
	if key == "" {
		return invalidRequest("parameter_missing", "idempotency_key", "The idempotency_key parameter is required.")
	}
	ch, err := p.q.ProviderChargeByKey(c.Request().Context(), key)
	return p.writeCharge(c, ch, err, "No charge was made with that idempotency key.")
}

// chargeByID serves GET /v1/charges/:id.
func (p *Provider) chargeByID(c echo.Context) error {
	ch, err := p.q.ProviderChargeByID(c.Request().Context(), c.Param("id"))
	return p.writeCharge(c, ch, err, "No such charge.")
}

func (p *Provider) writeCharge(c echo.Context, ch providerdb.ProviderCharge, err error, notFound string) error {
	switch {
	case errors.Is(err, database.ErrNotFound):
		// resource_missing, unlike route_not_found, tells a client the route
		// was right and the charge is truly absent.
		return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_missing", Message: notFound}
	case err != nil:
		return fmt.Errorf("get charge: %w", err)
	}
	return c.JSONBlob(http.StatusOK, mustMarshal(toJSON(ch)))
}
