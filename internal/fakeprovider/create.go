package fakeprovider

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/fakeprovider/providerdb"
)

// detachedRecordTimeout bounds the write a timed-out call still makes after
// its client has gone.
const detachedRecordTimeout = 10 * time.Second

var errKeyReused = &apiError{
	Status:  http.StatusBadRequest,
	Type:    typeIdempotency,
	Code:    "idempotency_key_reused",
	Message: "Keys for idempotent requests can only be used with the same parameters they were first used with.",
}

// createCharge serves POST /v1/charges.
func (p *Provider) createCharge(c echo.Context) error {
	key := c.Request().Header.Get("Idempotency-Key")
	if key == "" {
		return invalidRequest("idempotency_key_missing", "", "The Idempotency-Key header is required.")
	}
	if len(key) > maxKeyLength {
		return invalidRequest("idempotency_key_invalid", "", "The Idempotency-Key header is longer than 255 characters.")
	}
	params, err := readChargeParams(c)
	if err != nil {
		return err
	}

	ctx := c.Request().Context()
	b := p.callBehaviour()
	if err := sleep(ctx, b.Delay); err != nil {
		// The client gave up before processing began: nothing was charged.
		return fmt.Errorf("delay: %w", err)
	}

	fault := b.fault(p.draw())
	status := statusSucceeded
	if params.card == DeclinedCard || fault == FaultDecline {
		status = statusDeclined
	}

	switch fault {
	case FaultBeforeCharge:
		return p.inject(ctx, fault)
	case FaultTimeout:
		hangCtx, cancel := context.WithTimeout(ctx, MaxHang)
		<-hangCtx.Done()
		cancel()
	}
	// From here on the call is processed even if the client has gone: a
	// timeout or a hang-up tells the client nothing about the outcome, which
	// is exactly what the application must cope with.
	ctx, cancelRecord := context.WithTimeout(context.WithoutCancel(ctx), detachedRecordTimeout)
	defer cancelRecord()
	if p.beforeRecord != nil {
		p.beforeRecord(ctx, key)
	}

	ch, replayed, err := p.record(ctx, key, params, status)
	if err != nil {
		return err
	}
	p.log.InfoContext(ctx, "fakeprovider: charge", "charge", ch.ID, "status", ch.Status,
		"amount", ch.Amount, "currency", ch.Currency, "card_last4", ch.CardLast4, "replayed", replayed)
	if fault == FaultAfterCharge {
		return p.inject(ctx, fault)
	}

	code, body := createAnswer(ch)
	if replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	return c.JSONBlob(code, body)
}

// errCanceled answers a create-charge call whose idempotency key was
// canceled: the operation has a final "no charge" verdict, and nothing is
// charged now either.
var errCanceled = &apiError{
	Status:  http.StatusBadRequest,
	Type:    typeInvalidRequest,
	Code:    codeKeyCanceled,
	Message: "The operation with this idempotency key was canceled; nothing was or will be charged under it.",
}

// codeKeyCanceled is the error code of a create-charge call on a canceled key.
const codeKeyCanceled = "idempotency_key_canceled"

// record charges once per key: it inserts the charge, or, when the key has
// been used before, returns the charge made then, provided the parameters are
// the same. replayed reports the latter. A canceled key charges nothing and
// returns errCanceled. The decision is taken under the key's lock (see
// ProviderLockKey), so a concurrent cancel of the key either comes first, and
// this call charges nothing, or sees the charge and returns it.
func (p *Provider) record(ctx context.Context, key string, params chargeParams, status string) (ch providerdb.ProviderCharge, replayed bool, err error) {
	id, err := newChargeID()
	if err != nil {
		return providerdb.ProviderCharge{}, false, err
	}
	hash := params.hash()
	err = p.db.InTxConn(ctx, func(conn db.DBTX) error {
		q := providerdb.New(conn)
		if err := q.ProviderLockKey(ctx, key); err != nil {
			return fmt.Errorf("lock key: %w", err)
		}
		canceled, err := q.ProviderKeyCanceled(ctx, key)
		if err != nil {
			return fmt.Errorf("key canceled: %w", err)
		}
		if canceled {
			return errCanceled
		}
		ch, err = q.ProviderCreateCharge(ctx, providerdb.ProviderCreateChargeParams{
			ID:             id,
			IdempotencyKey: key,
			ParamsHash:     hash,
			Amount:         params.amount,
			Currency:       params.currency,
			CardLast4:      params.last4(),
			Description:    params.description,
			Status:         status,
		})
		if err == nil {
			return nil
		}
		if !errors.Is(err, database.ErrNotFound) {
			return fmt.Errorf("create charge: %w", err)
		}
		// ON CONFLICT DO NOTHING inserted no row: the key was used before.
		ch, err = q.ProviderChargeByKey(ctx, key)
		if err != nil {
			return fmt.Errorf("charge by key: %w", err)
		}
		if subtle.ConstantTimeCompare(ch.ParamsHash, hash) != 1 {
			return errKeyReused
		}
		replayed = true
		return nil
	})
	if err != nil {
		return providerdb.ProviderCharge{}, false, err
	}
	return ch, replayed, nil
}

// inject answers with the 500 of fault f.
func (p *Provider) inject(ctx context.Context, f Fault) error {
	p.log.InfoContext(ctx, "fakeprovider: injected fault", "fault", f.String())
	return &apiError{
		Status:  http.StatusInternalServerError,
		Type:    typeAPI,
		Code:    "injected_fault",
		Message: "Injected fault: " + f.String() + ".",
	}
}

// sleep waits d, or less if ctx ends first, in which case it returns ctx's
// error.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
