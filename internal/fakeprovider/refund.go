package fakeprovider

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/fakeprovider/providerdb"
)

// refundJSON is a refund as the API shows it.
type refundJSON struct {
	ID      string `json:"id"`
	Charge  string `json:"charge"`
	Amount  int64  `json:"amount"`
	Status  string `json:"status"` // always "succeeded": the fake refunds at once
	Created int64  `json:"created"`
}

func refundToJSON(r providerdb.ProviderRefund) refundJSON {
	return refundJSON{ID: r.ID, Charge: r.ChargeID, Amount: r.Amount, Status: statusSucceeded, Created: r.CreatedAt.Unix()}
}

// createRefund serves POST /v1/refunds with {"charge": id}: a full refund of
// a succeeded charge. Like a create-charge call it needs an Idempotency-Key,
// and a retry with the same key answers the same refund. A charge is
// refunded at most once: a second refund under another key is refused with
// charge_already_refunded.
func (p *Provider) createRefund(c echo.Context) error {
	key := c.Request().Header.Get("Idempotency-Key")
	if key == "" || len(key) > maxKeyLength {
		return invalidRequest("idempotency_key_missing", "", "An Idempotency-Key header of 1 to 255 characters is required.")
	}
	var body struct {
		Charge string `json:"charge"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Charge == "" {
		return errBodyInvalid
	}
	ctx := c.Request().Context()
	ch, err := p.q.ProviderChargeByID(ctx, body.Charge)
	if errors.Is(err, database.ErrNotFound) {
		return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_missing", Param: "charge", Message: "No such charge."}
	}
	if err != nil {
		return fmt.Errorf("get charge: %w", err)
	}
	if ch.Status != statusSucceeded {
		return invalidRequest("charge_not_refundable", "charge", "Only a succeeded charge can be refunded.")
	}
	u, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("new refund id: %w", err)
	}
	r, err := p.q.ProviderCreateRefund(ctx, providerdb.ProviderCreateRefundParams{
		ID: "re_" + hex.EncodeToString(u[:]), IdempotencyKey: key, ChargeID: ch.ID, Amount: ch.Amount,
	})
	switch {
	case err == nil:
		p.log.InfoContext(ctx, "fakeprovider: refund", "refund", r.ID, "charge", ch.ID, "amount", r.Amount)
		return c.JSON(http.StatusOK, refundToJSON(r))
	case !errors.Is(err, database.ErrNotFound):
		return fmt.Errorf("create refund: %w", err)
	}
	// Nothing inserted: the key or the charge has a refund already.
	r, err = p.q.ProviderRefundByCharge(ctx, ch.ID)
	switch {
	case err == nil && r.IdempotencyKey == key:
		c.Response().Header().Set("Idempotent-Replayed", "true")
		return c.JSON(http.StatusOK, refundToJSON(r))
	case err == nil:
		return invalidRequest("charge_already_refunded", "charge", "The charge has already been refunded.")
	case errors.Is(err, database.ErrNotFound):
		return errKeyReused
	}
	return fmt.Errorf("refund by charge: %w", err)
}
