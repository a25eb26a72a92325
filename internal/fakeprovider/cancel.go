package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/fakeprovider/providerdb"
)

// cancelJSON answers a cancel that found no charge.
type cancelJSON struct {
	IdempotencyKey string `json:"idempotency_key"`
	Status         string `json:"status"` // always "canceled"
}

// cancelByKey serves POST /v1/charges/cancel with {"idempotency_key": K}.
// It gives the operation under K a final verdict, as cancelling a Stripe
// PaymentIntent does: if a charge was made with K it answers that charge;
// otherwise it marks K canceled, and every later create-charge call with K
// (including one already sent but not yet processed) charges nothing and
// answers idempotency_key_canceled. Cancel and create of one key take the
// same lock, so exactly one of the two outcomes holds for good. Cancelling
// twice answers the same.
func (p *Provider) cancelByKey(c echo.Context) error {
	var body struct {
		IdempotencyKey string `json:"idempotency_key"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return errBodyInvalid
	}
	key := body.IdempotencyKey
	if key == "" || len(key) > maxKeyLength {
		return invalidRequest("parameter_invalid", "idempotency_key", "The idempotency_key parameter must have 1 to 255 characters.")
	}
	ctx := c.Request().Context()
	var (
		ch      providerdb.ProviderCharge
		charged bool
	)
	err := p.db.InTxConn(ctx, func(conn db.DBTX) error {
		q := providerdb.New(conn)
		if err := q.ProviderLockKey(ctx, key); err != nil {
			return fmt.Errorf("lock key: %w", err)
		}
		var err error
		ch, err = q.ProviderChargeByKey(ctx, key)
		switch {
		case err == nil:
			charged = true
			return nil
		case !errors.Is(err, database.ErrNotFound):
			return fmt.Errorf("charge by key: %w", err)
		}
		if err := q.ProviderCancelKey(ctx, key); err != nil {
			return fmt.Errorf("cancel key: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if charged {
		p.log.InfoContext(ctx, "fakeprovider: cancel found a charge", "charge", ch.ID, "status", ch.Status)
		return c.JSONBlob(http.StatusOK, mustMarshal(toJSON(ch)))
	}
	p.log.InfoContext(ctx, "fakeprovider: operation canceled")
	return c.JSON(http.StatusOK, cancelJSON{IdempotencyKey: key, Status: statusCanceled})
}
