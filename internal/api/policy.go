package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// policy is the idempotency policy in machine-readable form, as the IETF
// draft asks a resource to publish its key expiry.
type policy struct {
	// RetentionSeconds is how long a finished key is remembered after its
	// finish; after that the same key starts a new operation. Clients must
	// stop retrying well before that much time after their first attempt.
	RetentionSeconds int64 `json:"retention_seconds"`
	// LockTimeoutSeconds is how long an attempt holds a key without
	// renewing it; a retry after that resumes an interrupted operation.
	LockTimeoutSeconds int64 `json:"lock_timeout_seconds"`
	MaxKeyLength       int   `json:"max_key_length"`
	// Header and Scope say where the key goes and whose keys collide.
	Header string `json:"header"`
	Scope  string `json:"scope"`
}

// idempotencyPolicy is GET /api/idempotency-policy.
func (h *Handler) idempotencyPolicy(c echo.Context) error {
	return c.JSON(http.StatusOK, policy{
		RetentionSeconds:   int64(h.lifecycle.Retention.Seconds()),
		LockTimeoutSeconds: int64(h.checkout.LockTimeout().Seconds()),
		MaxKeyLength:       MaxKeyLength,
		Header:             "Idempotency-Key",
		Scope:              "customer",
	})
}
