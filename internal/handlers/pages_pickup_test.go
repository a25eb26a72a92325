package handlers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/problem"
)

// pickupForm loads the pickup form and fills it in.
func (s *shopper) pickupForm(t testing.TB, slot, name string) url.Values {
	t.Helper()
	p := s.get(t, "/pickup")
	if p.status != http.StatusOK {
		t.Fatalf("GET /pickup: got %d, want 200", p.status)
	}
	form := formValues(p.testid("pickup-form"))
	form.Set("slot", slot)
	form.Set("name", name)
	return form
}

func countPickups(t testing.TB, h *apptest.Harness) int {
	t.Helper()
	var n int
	if err := h.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pickup_reservations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPickupForm(t *testing.T) {
	t.Run("a form sent twice reserves once and shows the same reservation", func(t *testing.T) {
		h := apptest.New(t)
		s := newShopper(t, h)
		form := s.pickupForm(t, "sat-am", "Ada")
		first, again := s.post(t, "/pickup", form), s.post(t, "/pickup", form)
		if first.header.Get("Location") == "" || again.header.Get("Location") != first.header.Get("Location")+"?replayed=1" {
			t.Fatalf("got Locations %q and %q, want one, the second marked replayed", first.header.Get("Location"), again.header.Get("Location"))
		}
		if s.follow(t, first).testid("already-reserved").Length() != 0 {
			t.Error("the first answer says the slot was already reserved")
		}
		shown := s.follow(t, again)
		if got := shown.text("pickup-slot"); got != "Saturday, 9:00–12:00" {
			t.Fatalf("got slot %q, want Saturday morning", got)
		}
		if shown.testid("already-reserved").Length() != 1 {
			t.Error("the form sent again does not say the slot was already reserved")
		}
		if got := countPickups(t, h); got != 1 {
			t.Fatalf("got %d reservations, want 1", got)
		}
	})

	t.Run("a double click racing itself reserves once", func(t *testing.T) {
		h := apptest.New(t)
		s := newShopper(t, h)
		form := s.pickupForm(t, "mon-am", "Ada")
		var wg sync.WaitGroup
		locations := make([]string, 6)
		for i := range locations {
			wg.Go(func() { locations[i] = s.post(t, "/pickup", form).header.Get("Location") })
		}
		wg.Wait()
		for _, l := range locations {
			if strings.TrimSuffix(l, "?replayed=1") != strings.TrimSuffix(locations[0], "?replayed=1") || l == "" {
				t.Fatalf("got Locations %q, want one", locations)
			}
		}
		if got := countPickups(t, h); got != 1 {
			t.Fatalf("got %d reservations, want 1", got)
		}
	})

	t.Run("a form sent again with other answers gets a fresh form with them", func(t *testing.T) {
		h := apptest.New(t)
		s := newShopper(t, h)
		form := s.pickupForm(t, "mon-am", "Ada")
		s.post(t, "/pickup", form)
		form.Set("slot", "mon-pm")
		form.Set("name", "Ada L.")
		p := s.post(t, "/pickup", form)
		if p.status != http.StatusConflict || p.testid("pickup-note").Length() != 1 {
			t.Fatalf("got %d, want 409 and the form again with a note", p.status)
		}
		if got := countPickups(t, h); got != 1 {
			t.Fatalf("got %d reservations, want 1", got)
		}
		fresh := formValues(p.testid("pickup-form"))
		if fresh.Get(idem.KeyField) == form.Get(idem.KeyField) || fresh.Get(idem.KeyField) == "" {
			t.Errorf("got key %q, want a new key", fresh.Get(idem.KeyField))
		}
		if _, checked := p.testid("slot-mon-pm").Attr("checked"); !checked || fresh.Get("name") != "Ada L." {
			t.Errorf("got name %q and Monday afternoon checked %v, want the changed answers kept", fresh.Get("name"), checked)
		}
		fresh.Set("slot", "mon-pm")
		if got := s.follow(t, s.post(t, "/pickup", fresh)).text("pickup-slot"); !strings.HasPrefix(got, "Monday") || countPickups(t, h) != 2 {
			t.Fatalf("the fresh form: got slot %q and %d reservations, want Monday afternoon and 2", got, countPickups(t, h))
		}
	})

	t.Run("another browser's form is refused", func(t *testing.T) {
		h := apptest.New(t)
		alice, mallory := newShopper(t, h), newShopper(t, h)
		form := alice.pickupForm(t, "mon-am", "Ada")
		mine := mallory.pickupForm(t, "mon-am", "Ada")
		form.Set("csrf_token", mine.Get("csrf_token"))
		wantErrorPage(t, mallory.post(t, "/pickup", form), http.StatusBadRequest)
	})

	t.Run("an unknown slot reserves nothing and the key may be used again", func(t *testing.T) {
		h := apptest.New(t)
		s := newShopper(t, h)
		form := s.pickupForm(t, "sun-am", "Ada")
		p := s.post(t, "/pickup", form)
		if p.status != http.StatusBadRequest || p.text("slot-error") == "" {
			t.Fatalf("got %d, want 400 and the form with the slot's error", p.status)
		}
		if got := formValues(p.testid("pickup-form")); got.Get(idem.KeyField) != form.Get(idem.KeyField) || got.Get("name") != "Ada" {
			t.Errorf("got key %q and name %q, want the same key and the name as typed", got.Get(idem.KeyField), got.Get("name"))
		}
		form.Set("slot", "mon-am")
		if p := s.post(t, "/pickup", form); p.status != http.StatusSeeOther {
			t.Fatalf("got %d, want 303", p.status)
		}
	})

	t.Run("a submission whose key is held waits on the processing page", func(t *testing.T) {
		h := apptest.New(t)
		s := newShopper(t, h)
		form := s.pickupForm(t, "mon-am", "Ada")
		sum := sha256.Sum256([]byte(form.Get("csrf_token")))
		visitor := hex.EncodeToString(sum[:16])
		// Another attempt holds the key: claimed through the kit, as the
		// first of two submissions would have.
		c, err := h.App.Keys.Claim(context.Background(), idem.Request{Scope: visitor, Key: form.Get(idem.KeyField),
			Fingerprint: idem.Fingerprint([]byte(pickup.Version), []byte("mon-am"), []byte("Ada"))})
		if err != nil || c.Lock == nil {
			t.Fatalf("claim: %+v, %v", c, err)
		}
		sent := s.post(t, "/pickup", form)
		processing := s.follow(t, sent)
		if processing.status != http.StatusAccepted || processing.testid("processing").Length() != 1 || processing.header.Get("Refresh") == "" {
			t.Fatalf("got %d %v, want the processing page with a Refresh header", processing.status, processing.header)
		}
		if err := c.Lock.Finish(context.Background(), idem.Response{Status: http.StatusSeeOther,
			Header: map[string]string{"Location": "/pickup/42"}}); err != nil {
			t.Fatal(err)
		}
		if done := s.follow(t, sent); done.status != http.StatusSeeOther || done.header.Get("Location") != "/pickup/42" {
			t.Fatalf("got %d %q, want a redirect to the result", done.status, done.header.Get("Location"))
		}
	})
}

// A name that PostgreSQL's text cannot hold (NUL) or that carries control
// characters is refused with 400, naming the field, before anything is
// claimed or stored: from the form and from the API.
func TestPickupRefusesControlCharacters(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	c := h.NewCustomer(t)
	for _, name := range []string{"Ada\x00", "Ada\r\nBcc: x", "\x1b[2J", "Ada\x7f"} {
		if p := s.post(t, "/pickup", s.pickupForm(t, "sat-am", name)); p.status != http.StatusBadRequest {
			t.Errorf("form, name %q: got %d, want 400", name, p.status)
		}
		body, _ := json.Marshal(map[string]string{"slot": "sat-am", "name": name})
		r := h.Do(t, http.MethodPost, "/api/pickups", string(body), "Authorization", "Bearer "+c.Token,
			"Idempotency-Key", `"`+uuid.NewString()+`"`)
		p := apptest.WantProblem(t, r, problem.InvalidRequest)
		if !strings.HasPrefix(p.Detail, "name:") {
			t.Errorf("API, name %q: got detail %q, want it to name the field", name, p.Detail)
		}
	}
	if n := countPickups(t, h); n != 0 {
		t.Errorf("got %d reservations, want none", n)
	}
	if n := h.Count(t, `SELECT count(*) FROM idem_keys`); n != 0 {
		t.Errorf("got %d keys stored, want none", n)
	}
}

// Reservations are named by opaque ids, not by a sequence that tells how
// many were made; a stored answer that names one by its old number still
// leads to it.
func TestPickupIDsAreOpaque(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	p := s.post(t, "/pickup", s.pickupForm(t, "sat-am", "Ada"))
	loc := p.header.Get("Location")
	if _, err := uuid.Parse(strings.TrimPrefix(loc, "/pickup/")); err != nil {
		t.Fatalf("got Location %q, want /pickup/{uuid}", loc)
	}
	var number int64
	if err := h.DB.Pool.QueryRow(context.Background(), `SELECT id FROM pickup_reservations`).Scan(&number); err != nil {
		t.Fatal(err)
	}
	if got := s.get(t, "/pickup/"+strconv.FormatInt(number, 10)).text("pickup-slot"); got != "Saturday, 9:00–12:00" {
		t.Errorf("by its old number: got slot %q, want the reservation", got)
	}
}

// The pickup form's first, fresh answer is not marked as a replay; the
// answer to the same form sent again is.
func TestPickupFormMarksOnlyReplays(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	form := s.pickupForm(t, "sat-am", "Ada")
	first, again := s.post(t, "/pickup", form), s.post(t, "/pickup", form)
	if first.status != http.StatusSeeOther || first.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("first: got %d with Idempotent-Replayed %q, want a fresh 303", first.status, first.header.Get("Idempotent-Replayed"))
	}
	if again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("again: got Idempotent-Replayed %q, want true", again.header.Get("Idempotent-Replayed"))
	}
}
