package handlers

import (
	"fmt"
	"time"

	"exactlyonce/internal/web"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/labstack/echo/v4"
)

// Where the page middleware leaves what it read from the cookies.
const (
	shopperKey = "shopper_id"
	csrfKey    = "csrf_token"
)

// loadShopper makes the shopper named by a valid session cookie available to
// page handlers, unless that shopper signed out. It never creates one: a
// crawler's GET must not write a row, so a shopper comes into being only when
// it first changes its cart.
func (h *Handler) loadShopper(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if id, ok := h.sessions.Shopper(c.Request()); ok && !h.signedOut(c, id) {
			c.Set(shopperKey, id)
		}
		return next(c)
	}
}

// A shopper known not to have signed out is remembered this long, and at
// most this many: a sign-out takes effect at once on the instance that
// served it, and within a minute on the others.
const (
	shopperCacheTTL  = time.Minute
	shopperCacheSize = 10_000
)

func newShopperCache() *expirable.LRU[uuid.UUID, struct{}] {
	return expirable.NewLRU[uuid.UUID, struct{}](shopperCacheSize, nil, shopperCacheTTL)
}

// signedOut reports whether the shopper a session cookie names has signed
// out, so that a copy of the cookie kept elsewhere stops working too. When
// the database cannot say, the session is taken as it is: pages that only
// read (the catalog, from memory) keep working through an outage, and
// everything that writes needs the database anyway.
func (h *Handler) signedOut(c echo.Context, id uuid.UUID) bool {
	if _, ok := h.liveShoppers.Get(id); ok {
		return false
	}
	out, err := h.db.ShopperSignedOut(c.Request().Context(), id)
	if err != nil {
		h.log.WarnContext(c.Request().Context(), "check the session's shopper", "err", err)
		return false
	}
	if !out {
		h.liveShoppers.Add(id, struct{}{})
	}
	return out
}

// signOut is POST /signout: it ends the shopper's session, in this browser
// (the cookies are expired) and in any other that holds a copy of its
// cookie (the shopper is marked signed out). Its orders stay; the browser's
// next change starts a new, empty shopper.
func (h *Handler) signOut(c echo.Context) error {
	if id, ok := shopper(c); ok {
		if err := h.db.SignOutShopper(c.Request().Context(), id); err != nil {
			return fmt.Errorf("sign out: %w", err)
		}
		h.liveShoppers.Remove(id)
	}
	h.sessions.End(c.Response(), c.Request())
	return web.SeeOther(c, "/?signed_out=1")
}

// shopper returns the request's shopper, if it has a session.
func shopper(c echo.Context) (uuid.UUID, bool) {
	id, ok := c.Get(shopperKey).(uuid.UUID)
	return id, ok
}

// ensureShopper returns the request's shopper, creating the session and the
// customer row on first need. The row is written even for a known session:
// the insert is idempotent and heals a cookie that outlived its database.
func (h *Handler) ensureShopper(c echo.Context) (uuid.UUID, error) {
	id, ok := shopper(c)
	if !ok {
		if err := h.limits.AllowNewCustomer(c); err != nil {
			return uuid.Nil, err
		}
		var err error
		if id, err = uuid.NewV7(); err != nil {
			return uuid.Nil, fmt.Errorf("shopper id: %w", err)
		}
	}
	if err := h.db.EnsureShopper(c.Request().Context(), id); err != nil {
		return uuid.Nil, fmt.Errorf("create shopper: %w", err)
	}
	if !ok {
		if err := h.sessions.SetShopper(c.Response(), c.Request(), id); err != nil {
			return uuid.Nil, err
		}
		c.Set(shopperKey, id)
	}
	return id, nil
}

// csrfToken is the token the page's forms must carry.
func csrfToken(c echo.Context) string {
	token, _ := c.Get(csrfKey).(string)
	return token
}

// CSRFToken is the token the page's forms must carry, for pages mounted
// beside the shop's (Deps.Demo) behind the same guard.
func CSRFToken(c echo.Context) string { return csrfToken(c) }
