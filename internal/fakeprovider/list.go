package fakeprovider

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/fakeprovider/providerdb"
)

// Bounds on a page of the charges list, as Stripe's.
const (
	defaultListLimit = 10
	maxListLimit     = 100
)

// listedChargeJSON is a charge as the list shows it. Unlike Stripe's charge
// object it carries the idempotency key it was made with: a real provider
// keeps no such field, and a shop would set its own reference as metadata
// on the create call to match charges to operations.
type listedChargeJSON struct {
	chargeJSON
	IdempotencyKey string `json:"idempotency_key"`
	Refunded       bool   `json:"refunded"`
}

// listJSON is one page of a list, in Stripe's shape.
type listJSON struct {
	Object  string             `json:"object"` // "list"
	Data    []listedChargeJSON `json:"data"`
	HasMore bool               `json:"has_more"`
}

// listOrFind serves GET /v1/charges: with idempotency_key, the charge made
// with it (chargeByKey); otherwise a page of every charge in creation order,
// after the charge named by starting_after, at most limit of them.
func (p *Provider) listOrFind(c echo.Context) error {
	if c.QueryParams().Has("idempotency_key") {
		return p.chargeByKey(c)
	}
	limit := defaultListLimit
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			return invalidRequest("parameter_invalid", "limit", fmt.Sprintf("Limit must be between 1 and %d.", maxListLimit))
		}
		limit = n
	}
	// One more than asked tells whether there is another page.
	rows, err := p.q.ProviderListCharges(c.Request().Context(), providerdb.ProviderListChargesParams{
		After: c.QueryParam("starting_after"), MaxRows: int32(limit + 1),
	})
	if err != nil {
		return fmt.Errorf("list charges: %w", err)
	}
	page := listJSON{Object: "list", Data: []listedChargeJSON{}}
	for i, r := range rows {
		if i == limit {
			page.HasMore = true
			break
		}
		page.Data = append(page.Data, listedChargeJSON{
			chargeJSON: chargeJSON{
				ID: r.ID, Amount: r.Amount, Currency: r.Currency, Status: r.Status,
				CardLast4: r.CardLast4, Description: r.Description, Created: r.CreatedAt.Unix(),
			},
			IdempotencyKey: r.IdempotencyKey,
			Refunded:       r.Refunded,
		})
	}
	return c.JSON(http.StatusOK, page)
}
