package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// customerKey is where requireCustomer leaves the authenticated customer.
const customerKey = "customer_id"

// requireCustomer authenticates an API request by its bearer token. The
// token is looked up by its SHA-256: it has 256 bits of entropy, so a fast
// hash is as safe as a slow one, and it can be indexed.
//
// A token found in the database is remembered for tokenCacheTTL, so that a
// client's requests after its first cost no round trip for authentication
// (a replay is then one statement in all). Tokens are never revoked or
// reassigned today; a revocation would take effect within that TTL.
// Unknown tokens are never remembered: each is looked up again.
func (h *Handler) requireCustomer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		token, ok := bearerToken(c.Request().Header.Get(echo.HeaderAuthorization))
		if !ok {
			return web.Fail(problem.Unauthorized, "send Authorization: Bearer <token>")
		}
		hash := sha256.Sum256([]byte(token))
		id, ok := h.tokens.Get(hash)
		if !ok {
			row, err := h.db.CustomerByTokenHash(c.Request().Context(), hash[:])
			if errors.Is(err, database.ErrNotFound) {
				return web.Fail(problem.Unauthorized, "the bearer token is not valid")
			}
			if err != nil {
				return fmt.Errorf("authenticate: %w", err)
			}
			id = row.ID
			h.tokens.Add(hash, id)
		}
		c.Set(customerKey, id)
		return next(c)
	}
}

// Verified tokens are remembered this long, and at most this many.
const (
	tokenCacheTTL  = time.Minute
	tokenCacheSize = 10_000
)

// newTokenCache returns the cache of verified tokens: a bounded LRU whose
// entries expire (hashicorp/golang-lru's expirable), by SHA-256 of the token.
func newTokenCache() *expirable.LRU[[sha256.Size]byte, uuid.UUID] {
	return expirable.NewLRU[[sha256.Size]byte, uuid.UUID](tokenCacheSize, nil, tokenCacheTTL)
}

// bearerToken reads "Bearer <token>". The scheme name is case-insensitive
// (RFC 9110, section 11.1), so "bearer" and "BEARER" are as good.
func bearerToken(auth string) (string, bool) {
	scheme, token, ok := strings.Cut(auth, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// customerID returns the customer requireCustomer authenticated.
func customerID(c echo.Context) uuid.UUID {
	return c.Get(customerKey).(uuid.UUID)
}

// newToken returns a bearer token and the hash to store.
func newToken() (token string, hash []byte) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics rather than return short)
	token = "tok_" + base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token)
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
