package api_test

import (
	"net/http"
	"sync"
	"testing"

	"exactlyonce/internal/apptest"
)

// The pickup endpoint is protected by the kit's middleware alone: these
// tests are its end-to-end proof on a real route.
func TestPickupAPI(t *testing.T) {
	h := apptest.New(t)
	c := h.NewCustomer(t)
	reserve := func(key, body string) apptest.Response {
		headers := []string{"Authorization", "Bearer " + c.Token}
		if key != "" {
			headers = append(headers, "Idempotency-Key", key)
		}
		return h.Do(t, http.MethodPost, "/api/pickups", body, headers...)
	}

	first := reserve(`"p-1"`, `{"slot": "mon-am", "name": "Ada"}`)
	if first.Status != http.StatusCreated || first.Header.Get("Location") == "" {
		t.Fatalf("first: got %d %s, want 201 with a Location", first.Status, first.Body)
	}

	t.Run("a retry with the body's members in another order replays the answer", func(t *testing.T) {
		again := reserve(`p-1`, `{"name":"Ada","slot":"mon-am"}`)
		if again.Status != http.StatusCreated || string(again.Body) != string(first.Body) ||
			again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("got %d %s %v, want the first answer replayed", again.Status, again.Body, again.Header)
		}
		if got := h.Do(t, http.MethodGet, first.Header.Get("Location"), "", "Authorization", "Bearer "+c.Token); got.Status != http.StatusOK {
			t.Fatalf("GET the reservation: got %d %s", got.Status, got.Body)
		}
	})

	t.Run("racing requests with one key reserve once", func(t *testing.T) {
		var wg sync.WaitGroup
		statuses := make([]int, 6)
		for i := range statuses {
			wg.Go(func() { statuses[i] = reserve(`"p-race"`, `{"slot": "sat-am", "name": "Ada"}`).Status })
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
			default:
				t.Fatalf("got statuses %v, want 201s and 409s", statuses)
			}
		}
		if created == 0 || h.Count(t, `SELECT count(*) FROM pickup_reservations`) != 2 {
			t.Fatalf("got statuses %v and %d reservations, want 2 reservations in all", statuses, h.Count(t, `SELECT count(*) FROM pickup_reservations`))
		}
	})

	for _, tc := range []struct {
		name, key, body, problem string
		status                   int
	}{
		{"the key with another body is refused", `"p-1"`, `{"slot": "mon-pm", "name": "Ada"}`, "/problems/idempotency-key-reused", 422},
		{"no key is refused", ``, `{"slot": "mon-am", "name": "Ada"}`, "/problems/missing-idempotency-key", 400},
		{"a malformed key is refused", `"p-2`, `{"slot": "mon-am", "name": "Ada"}`, "/problems/invalid-idempotency-key", 400},
		{"an unknown slot is refused", `"p-3"`, `{"slot": "sun-am", "name": "Ada"}`, "/problems/invalid-request", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := reserve(tc.key, tc.body)
			var p struct{ Type string }
			r.JSON(t, &p)
			if r.Status != tc.status || p.Type != tc.problem {
				t.Fatalf("got %d %s, want %d %s", r.Status, p.Type, tc.status, tc.problem)
			}
		})
	}
}
