package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"

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
		Layout:      func(title string, body idemecho.Component) idemecho.Component { return views.Framed(title, body) },
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
	if err := h.readCartCount(c); err != nil {
		return err
	}
	// Kept in the browser's cache (private, revalidated on a normal visit),
	// as the checkout page is: Back from the reservation shows this very
	// form, with its key, so sending it again unchanged replays the
	// reservation and sending it changed gets a fresh form (reservePickup).
	c.Response().Header().Set(echo.HeaderCacheControl, "private, no-cache")
	return web.Render(c, http.StatusOK, views.Pickup(pickupForm(c, key, "", "")))
}

// pickupForm is the form's view with key, showing slot and name as typed.
func pickupForm(c echo.Context, key idem.FormKey, slot, name string) views.PickupForm {
	f := views.PickupForm{CSRFToken: csrfToken(c), Key: key, Slot: slot, Name: name}
	for _, s := range pickup.Slots {
		f.Slots = append(f.Slots, views.Link{Href: s.ID, Label: s.Label})
	}
	return f
}

// reservePickup is POST /pickup. It submits through the kit's form core
// rather than its Submit, which writes the answer itself, so that it can
// answer the two ways a visitor meets after Back as pages: a replay lands
// on the reservation with a note saying nothing more was reserved, and a
// form changed after it was sent (the kit's ErrMismatch) gets a fresh form
// with the change kept.
func (h *Handler) reservePickup(c echo.Context) error {
	who, slot, name := visitor(c), c.FormValue("slot"), c.FormValue("name")
	key := idemhttp.FormKeyOf(c.Request())
	// Refused before the key is claimed: nothing is stored, and the same
	// form, with the same key, comes back with what was typed and the
	// error next to its field.
	if _, err := pickup.Validate(slot, name); err != nil {
		var bad *pickup.InvalidError
		if !errors.As(err, &bad) {
			return err
		}
		f := pickupForm(c, key, slot, strings.ToValidUTF8(name, ""))
		why := strings.ToUpper(bad.Reason[:1]) + bad.Reason[1:] + "."
		if bad.Field == "slot" {
			f.SlotError = why
		} else {
			f.NameError = why
		}
		return web.Render(c, http.StatusBadRequest, views.Pickup(f))
	}
	o, err := h.pickupFlow.Core().Submit(c.Request().Context(), who, key, []string{slot, name},
		func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			id, err := pickup.Reserve(ctx, tx, who, slot, name)
			return idem.Redirect("/pickup/" + id.String()), err
		})
	switch {
	case errors.Is(err, idem.ErrInProgress):
		return web.SeeOther(c, "/pickup/status?"+url.Values{"key": {key.Key}}.Encode())
	case errors.Is(err, idem.ErrMismatch):
		return h.pickupChanged(c, slot, name)
	case err != nil:
		return err
	}
	if loc := o.Header["Location"]; o.Replayed && o.Status == http.StatusSeeOther && strings.HasPrefix(loc, "/pickup/") {
		o.Header = maps.Clone(o.Header)
		o.Header["Location"] = loc + "?replayed=1"
	}
	idemhttp.Write(c.Response(), o)
	return nil
}

// pickupChanged answers a form sent again with other answers than its key
// was first used for (Back, then a fix): what that key reserved stands, and
// a fresh form, with a key of its own, holds the changed answers, to be
// sent as a new reservation.
func (h *Handler) pickupChanged(c echo.Context, slot, name string) error {
	key, err := h.pickupFlow.Key(c)
	if err != nil {
		return err
	}
	f := pickupForm(c, key, slot, name)
	f.Note = "This form was already sent with other answers, and that reservation stands. " +
		"Here is a new form with your changes: send it to make another reservation."
	return web.Render(c, http.StatusConflict, views.Pickup(f))
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
	return web.Render(c, http.StatusOK, views.PickupReserved(views.PickupReceipt{ID: r.ID.String(), Slot: r.Slot.Label, Name: r.Name,
		AlreadyReserved: c.QueryParam("replayed") == "1"}))
}
