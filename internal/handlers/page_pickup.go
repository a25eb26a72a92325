package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/pickup"
	"exactlyonce/views"
)

// The pickup slot form: the kit's worked example (docs/kit.md). Everything
// that makes it safe to send twice is idem.FormFlow; this file is HTTP glue.

type pickups interface {
	Get(ctx context.Context, visitor, id string) (pickup.Reservation, error)
	ReserveFinishing(ctx context.Context, l *idem.Lock, visitor, slot, name string, answer func(id uuid.UUID) idem.Response) (idem.Response, error)
}

// visitor names the browser a pickup key is bound to and scoped by: a hash
// of its CSRF token, which its session cookie seals, so no secret is stored.
func visitor(c echo.Context) string {
	sum := sha256.Sum256([]byte(csrfToken(c)))
	return hex.EncodeToString(sum[:16])
}

func (h *Handler) pickupPage(c echo.Context) error {
	f := views.PickupForm{CSRFToken: csrfToken(c), Key: h.pickupFlow.Forms.Mint(visitor(c), pickup.Version)}
	for _, s := range pickup.Slots {
		f.Slots = append(f.Slots, views.Link{Href: s.ID, Label: s.Label})
	}
	return render(c, 200, views.Pickup(f))
}

func (h *Handler) reservePickup(c echo.Context) error {
	who, slot, name := visitor(c), c.FormValue("slot"), c.FormValue("name")
	// Refused before the key is claimed: nothing is stored, and the same
	// form, corrected, reserves with its key.
	if _, err := pickup.Validate(slot, name); err != nil {
		return err
	}
	s := idem.Submission{Visitor: who, Version: pickup.Version, Fields: []string{slot, name}}
	return h.pickupFlow.Submit(c, s, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		id, err := pickup.Reserve(ctx, tx, who, slot, name)
		return idem.Response{Status: 303, Header: map[string]string{"Location": "/pickup/" + id.String()}}, err
	})
}

func (h *Handler) pickupStatus(c echo.Context) error { return h.pickupFlow.Status(c, visitor(c)) }

func (h *Handler) pickupReceipt(c echo.Context) error {
	r, err := h.pickups.Get(c.Request().Context(), visitor(c), c.Param("id"))
	if err != nil {
		return err
	}
	return render(c, 200, views.PickupReserved(views.PickupReceipt{ID: r.ID.String(), Slot: r.Slot.Label, Name: r.Name}))
}

// framedPage renders the kit's processing page inside the shop's layout.
func framedPage(c echo.Context, status int, body templ.Component) error {
	return render(c, status, views.Framed("Processing", body))
}
