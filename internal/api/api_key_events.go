package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// maxKeyEvents bounds one answer; a key sees a handful of events per life.
const maxKeyEvents = 1000

// keyEvent is one state change of a key, as the audit endpoint returns it.
type keyEvent struct {
	Event  string          `json:"event"`
	At     time.Time       `json:"at"`
	Detail json.RawMessage `json:"detail"`
}

// keyEvents is GET /api/keys/:key/events: the caller's key's audit trail,
// oldest first, with the database's times: claimed, taken_over, finished,
// recovered, expired. A key the caller never used has an empty trail, the
// same answer as another customer's key.
func (h *Handler) keyEvents(c echo.Context) error {
	// Echo routes on the raw path when the request has one, so a key with
	// a percent-encoded "/" arrives encoded; otherwise it is decoded.
	key, err := c.Param("key"), error(nil)
	if c.Request().URL.RawPath != "" {
		key, err = url.PathUnescape(key)
	}
	if err == nil {
		err = idem.CheckKey(key)
	}
	if err != nil {
		return web.Fail(problem.InvalidKey, "the key in the path must be 1 to 255 printable ASCII characters, percent-encoded")
	}
	rows, err := h.db.ListKeyEvents(c.Request().Context(), db.ListKeyEventsParams{
		CustomerID: customerID(c), Key: key, MaxRows: maxKeyEvents,
	})
	if err != nil {
		return fmt.Errorf("list key events: %w", err)
	}
	events := make([]keyEvent, len(rows))
	for i, r := range rows {
		events[i] = keyEvent{Event: r.Event, At: r.At, Detail: r.Detail}
	}
	return c.JSON(http.StatusOK, events)
}
