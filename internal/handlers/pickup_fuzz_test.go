package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"exactlyonce/internal/apptest"
)

// FuzzPickup reserves pickup slots through the whole application, from the
// form and from the API, with the slot and name the fuzzer picks (NUL,
// control characters, invalid UTF-8, long names among the seeds).
// Invariants: never a 5xx; a name or slot refused is a 400 that stores
// nothing; the same request sent again gets the same status.
func FuzzPickup(f *testing.F) {
	for _, seed := range []struct{ slot, name string }{
		{"sat-am", "Ada"}, {"sat-am", "Ada\x00"}, {"mon-am", "A\r\nB"}, {"mon-pm", "\x1b[31mred"},
		{"sat-am", "\xff\xfe"}, {"sat-am", "   "}, {"nope", "Ada"}, {"", ""}, {"sat-am", "é" + string(make([]byte, 120))},
	} {
		f.Add(seed.slot, seed.name)
	}
	h := apptest.New(f, withSecret)
	s := newShopper(f, h)
	c := h.NewCustomer(f)
	n := 0
	f.Fuzz(func(t *testing.T, slot, name string) {
		n++
		before := countPickups(t, h)
		form := s.pickupForm(t, slot, name)
		first, again := s.post(t, "/pickup", form), s.post(t, "/pickup", form)
		if first.status >= 500 || again.status >= 500 || first.status != again.status {
			t.Fatalf("form (%q, %q): got %d then %d, want the same status, never a 5xx", slot, name, first.status, again.status)
		}
		body, err := json.Marshal(map[string]string{"slot": slot, "name": name})
		if err != nil {
			return
		}
		key := `"fuzz-` + string(rune('a'+n%26)) + "-" + itoa(n) + `"`
		api := func() apptest.Response {
			return h.Do(t, http.MethodPost, "/api/pickups", string(body), "Authorization", "Bearer "+c.Token, "Idempotency-Key", key)
		}
		r1, r2 := api(), api()
		if r1.Status >= 500 || r2.Status >= 500 || r1.Status != r2.Status {
			t.Fatalf("API (%q, %q): got %d then %d, want the same status, never a 5xx", slot, name, r1.Status, r2.Status)
		}
		stored := countPickups(t, h) - before
		want := 0
		if first.status == http.StatusSeeOther {
			want++
		}
		if r1.Status == http.StatusCreated {
			want++
		}
		if stored != want {
			t.Fatalf("(%q, %q): %d reservations stored, want %d (form %d, API %d)", slot, name, stored, want, first.status, r1.Status)
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
