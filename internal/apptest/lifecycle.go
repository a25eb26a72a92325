package apptest

import (
	"context"
	"exactlyonce/fakestripe"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"exactlyonce/internal/db"
)

// Key reads a key's row as an operator would.
func (h *Harness) Key(tb testing.TB, c Customer, key string) db.GetKeyRow {
	tb.Helper()
	k, err := h.DB.GetKey(context.Background(), db.GetKeyParams{CustomerID: c.ID, Key: key})
	if err != nil {
		tb.Fatalf("get key %q: %v", key, err)
	}
	return k
}

// Intent returns the PaymentIntent the key's current operation created at
// the fake (found by the metadata the shop writes on it), or an error when
// there is none.
func (h *Harness) Intent(tb testing.TB, c Customer, key string) (fakestripe.Intent, error) {
	tb.Helper()
	op := h.Key(tb, c, key).OperationID.String()
	intents, err := h.Provider.IntentsByMetadata(context.Background(), map[string]string{"operation_id": op})
	if err != nil {
		return fakestripe.Intent{}, err
	}
	if len(intents) != 1 {
		return fakestripe.Intent{}, fmt.Errorf("got %d intents of operation %s, want 1", len(intents), op)
	}
	return intents[0], nil
}

// Backdate moves a key's creation and finish, and its audit events, back by d, as if
// it had been made that long ago. Tests of expiry use it instead of waiting
// out a retention window; no query of the application does this, so it is
// SQL of the test's own.
func (h *Harness) Backdate(tb testing.TB, c Customer, key string, d time.Duration) {
	tb.Helper()
	ctx := context.Background()
	_, err := h.DB.Pool.Exec(ctx, `UPDATE idem_keys SET created_at = created_at - $3::interval,
		finished_at = finished_at - $3::interval WHERE scope = $1::uuid::text AND key = $2`, c.ID, key, d)
	if err == nil {
		_, err = h.DB.Pool.Exec(ctx, `UPDATE key_events SET at = at - $3::interval
			WHERE customer_id = $1 AND key = $2`, c.ID, key, d)
	}
	if err != nil {
		tb.Fatalf("backdate key %q: %v", key, err)
	}
}

// KeyEvent is one entry of a key's audit trail as the API returns it.
type KeyEvent struct {
	Event  string         `json:"event"`
	At     time.Time      `json:"at"`
	Detail map[string]any `json:"detail"`
}

// KeyEvents reads a key's audit trail through the API.
func (h *Harness) KeyEvents(tb testing.TB, c Customer, key string) []KeyEvent {
	tb.Helper()
	r := h.Do(tb, http.MethodGet, "/api/keys/"+key+"/events", "", "Authorization", "Bearer "+c.Token)
	if r.Status != http.StatusOK {
		tb.Fatalf("key events: got %d %s, want 200", r.Status, r.Body)
	}
	var events []KeyEvent
	r.JSON(tb, &events)
	return events
}

// EventNames lists the event names of a trail, in order.
func EventNames(events []KeyEvent) []string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.Event
	}
	return names
}

// Admin sends a GET to the application's admin handler (/metrics, pprof),
// which is served apart from the public address.
func (h *Harness) Admin(tb testing.TB, path string) Response {
	tb.Helper()
	w := httptest.NewRecorder()
	h.App.Admin().ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return Response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
}
