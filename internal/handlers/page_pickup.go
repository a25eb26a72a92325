package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// The pickup slot form: the kit's worked example (docs/kit.md). Everything
// that makes it safe to send twice is the kit's form (idemecho.Form); this
// file is HTTP glue.

// visitor names the browser a pickup key is bound to and scoped by: a hash
// of its CSRF token, which its session cookie seals, so no secret is stored.
func visitor(c echo.Context) string {
	sum := sha256.Sum256([]byte(csrfToken(c)))
	return hex.EncodeToString(sum[:16])
}

// newPickupForm is the pickup form's flow: the kit's form for Echo, scoped
// to the visitor, its processing page framed in the shop's layout.
func newPickupForm(d Deps) *idemecho.Form {
	f, err := idemecho.NewForm(idemecho.FormOptions{
		FormOptions: idem.FormOptions{Store: d.Keys, Secret: d.FormSecret, TTL: d.FormTTL, Version: pickup.Version},
		Visitor:     func(c echo.Context) (string, error) { return visitor(c), nil },
		StatusPath:  "/pickup/status",
		Page:        framedPage,
	})
	if err != nil {
		// The configuration refuses a short secret at start-up.
		panic(fmt.Sprintf("pickup form: %v", err))
	}
	return f
}

func (h *Handler) pickupPage(c echo.Context) error {
	key, err := h.pickupFlow.Key(c)
	if err != nil {
		return err
	}
	id, ok := shopper(c)
	if err := h.readCartCount(c, id, ok); err != nil {
		return err
	}
	f := views.PickupForm{CSRFToken: csrfToken(c), Key: key}
	for _, s := range pickup.Slots {
		f.Slots = append(f.Slots, views.Link{Href: s.ID, Label: s.Label})
	}
	return web.Render(c, 200, views.Pickup(f))
}

func (h *Handler) reservePickup(c echo.Context) error {
	who, slot, name := visitor(c), c.FormValue("slot"), c.FormValue("name")
	// Refused before the key is claimed: nothing is stored, and the same
	// form, corrected, reserves with its key.
	if _, err := pickup.Validate(slot, name); err != nil {
		return err
	}
	return h.pickupFlow.Submit(c, []string{slot, name}, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		id, err := pickup.Reserve(ctx, tx, who, slot, name)
		return idem.Redirect("/pickup/" + id.String()), err
	})
}

func (h *Handler) pickupStatus(c echo.Context) error {
	err := h.pickupFlow.Status(c)
	if errors.Is(err, idem.ErrNotFound) {
		return web.Fail(problem.NotFound, "no reservation is being made with this form")
	}
	return err
}

func (h *Handler) pickupReceipt(c echo.Context) error {
	r, err := h.pickups.Get(c.Request().Context(), visitor(c), c.Param("id"))
	if err != nil {
		return err
	}
	return web.Render(c, 200, views.PickupReserved(views.PickupReceipt{ID: r.ID.String(), Slot: r.Slot.Label, Name: r.Name}))
}

// framedPage renders the kit's processing page inside the shop's layout.
func framedPage(c echo.Context, status int, body idemhttp.Component) error {
	return web.Render(c, status, views.Framed("Processing", body))
}
