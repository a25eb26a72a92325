package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/db"
	"exactlyonce/internal/lab"
)

// lockLength is how long the lock of c's key was taken for: a finished key
// keeps the locked_until its last claim set.
func lockLength(t *testing.T, h *apptest.Harness, c apptest.Customer, key string) time.Duration {
	t.Helper()
	k, err := h.DB.GetKey(context.Background(), db.GetKeyParams{CustomerID: c.ID, Key: key})
	if err != nil {
		t.Fatalf("get key: %v", err)
	}
	return k.LockedUntil.Sub(k.CreatedAt)
}

func TestDemoLockHeader(t *testing.T) {
	t.Parallel()
	demo := apptest.New(t, withLab)
	c := demo.NewCustomer(t)
	// 3 s, not the shortest the header takes (1 s): an attempt fences
	// itself at three quarters of its lock, which a loaded machine running
	// the tests through PgBouncer can reach before a provider call ends.
	r := demo.Do(t, http.MethodPost, "/api/orders", oneMug, "Authorization", "Bearer "+c.Token, "Idempotency-Key", "k", lab.LockHeader, "3s")
	if r.Status != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", r.Status, r.Body)
	}
	if got := lockLength(t, demo, c, "k"); got > 4*time.Second {
		t.Errorf("demo server: got a %v lock, want the 3s asked for", got)
	}
	for _, bad := range []string{"soon", "1ms", "999ms", "1h"} {
		r := demo.Do(t, http.MethodPost, "/api/orders", oneMug, "Authorization", "Bearer "+c.Token, "Idempotency-Key", "k-"+bad, lab.LockHeader, bad)
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s %q: got %d, want 400", lab.LockHeader, bad, r.Status)
		}
	}

	prod := apptest.New(t)
	c = prod.NewCustomer(t)
	r = prod.Do(t, http.MethodPost, "/api/orders", oneMug, "Authorization", "Bearer "+c.Token, "Idempotency-Key", "k", lab.LockHeader, "1s")
	if r.Status != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", r.Status, r.Body)
	}
	if got := lockLength(t, prod, c, "k"); got < 29*time.Second {
		t.Errorf("server without demo: got a %v lock, want the server's 30s (the header ignored)", got)
	}
}

func TestLabOnlyInDemoMode(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	wantErrorPage(t, s.get(t, "/lab"), http.StatusNotFound)
	if h.App.Demo != nil {
		t.Error("got a demo mounted without demo mode")
	}
}

// TestLabWithoutScript presses a Run button the way a browser without
// JavaScript does: a form post, a 303, and the page with the result.
func TestLabWithoutScript(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	s := newShopper(t, h)
	p := s.get(t, "/lab")
	if p.status != http.StatusOK {
		t.Fatalf("got %d, want 200", p.status)
	}
	if n := p.doc.Find(`[data-testid^="scenario-"]`).Length(); n != len(lab.Scenarios) {
		t.Errorf("got %d cards, want %d", n, len(lab.Scenarios))
	}
	card := p.testid("scenario-tampered")
	if got := strings.TrimSpace(card.Find(`[data-testid=result]`).Text()); got != "Not run yet." {
		t.Errorf("before a run: got result %q, want Not run yet.", got)
	}
	form := card.Find("form")
	action, _ := form.Attr("action")

	after := s.follow(t, s.post(t, action, formValues(form)))
	result := after.testid("scenario-tampered").Find(`[data-testid=result]`)
	for id, want := range map[string]string{"charges-n": "1", "orders-n": "1", "verdict": "✓ As expected"} {
		if got := strings.TrimSpace(result.Find(`[data-testid="` + id + `"]`).Text()); got != want {
			t.Errorf("%s: got %q, want %q", id, got, want)
		}
	}
	var statuses []string
	result.Find(`[data-testid=attempt] [data-testid=status]`).Each(func(_ int, st *goquery.Selection) {
		statuses = append(statuses, strings.TrimSpace(st.Text()))
	})
	if got := strings.Join(statuses, " "); got != "201 422" {
		t.Errorf("got statuses %q, want 201 422", got)
	}
	if n := after.testid("inspector").Find(`[data-testid=key]`).Length(); n != 1 {
		t.Errorf("inspector: got %d keys, want the run's one key", n)
	}
	if n := after.testid("events").Find("li").Length(); n != 2 {
		t.Errorf("inspector: got %d events, want claimed and finished", n)
	}
	// A finished key holds no lock: no countdown, no "expired".
	key := after.testid("inspector").Find(`[data-testid=key]`)
	if got := strings.TrimSpace(key.Find(`[data-testid=key-lock]`).Text()); got != "none: finished, answer stored" {
		t.Errorf("inspector: a finished key's lock reads %q, want none: finished, answer stored", got)
	}
	if got := strings.TrimSpace(key.Find("td").Eq(4).Text()); got != "201" {
		t.Errorf("inspector: a finished key's stored response reads %q, want 201", got)
	}

	// Without the form's token the run is refused and nothing happens.
	if r := s.post(t, action, url.Values{}); r.status != http.StatusBadRequest {
		t.Errorf("without a CSRF token: got %d, want 400", r.status)
	}
	if r := s.post(t, "/lab/run/no-such", formValues(form)); r.status != http.StatusNotFound {
		t.Errorf("unknown scenario: got %d, want 404", r.status)
	}
}

// TestLabFragments is what the page script asks for: a card's result after
// a run, the inspector, and the live panel (none when nothing runs).
func TestLabFragments(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	s := newShopper(t, h)
	form := s.get(t, "/lab").testid("scenario-refresh").Find("form")
	req, err := http.NewRequest(http.MethodPost, h.URL+"/lab/run/refresh", strings.NewReader(formValues(form).Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Lab-Fragment", "card")
	p := s.do(t, req)
	if p.status != http.StatusOK {
		t.Fatalf("got %d, want 200", p.status)
	}
	if got := p.doc.Find(`[data-testid=result] [data-testid=replayed]`).Length(); got != 1 {
		t.Errorf("got %d replayed attempts in the fragment, want 1", got)
	}
	if p.testid("scenario-refresh").Length() != 0 {
		t.Error("got the whole card, want only its result")
	}
	if r := s.get(t, "/lab/inspector"); r.testid("key").Length() != 1 {
		t.Errorf("inspector: got %d keys, want 1", r.testid("key").Length())
	}
	if r := s.get(t, "/lab/live"); r.status != http.StatusNoContent {
		t.Errorf("live with no run in flight: got %d, want 204", r.status)
	}
}

func TestLabFaultPanel(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	s := newShopper(t, h)
	form := formValues(s.get(t, "/lab").testid("faults").Find("form"))
	form.Set("delay_ms", "250")
	form.Set("fail", "decline")
	if r := s.post(t, "/lab/provider", form); r.status != http.StatusSeeOther {
		t.Fatalf("got %d, want 303", r.status)
	}
	want := fakestripe.Behaviour{Delay: 250 * time.Millisecond, Fail: fakestripe.FaultDecline}
	if got := h.Provider.Behaviour(); got != want {
		t.Errorf("got provider %+v, want %+v", got, want)
	}
	p := s.get(t, "/lab")
	if v, _ := p.testid("fault-delay").Attr("value"); v != "250" {
		t.Errorf("panel shows latency %q, want 250", v)
	}
	if v, _ := p.testid("fault-fail").Find("option[selected]").Attr("value"); v != "decline" {
		t.Errorf("panel shows fault %q, want decline", v)
	}
	form.Set("delay_ms", "-5")
	wantErrorPage(t, s.post(t, "/lab/provider", form), http.StatusBadRequest)
	form.Set("delay_ms", "0")
	form.Set("fail", "explode")
	wantErrorPage(t, s.post(t, "/lab/provider", form), http.StatusBadRequest)
	if got := h.Provider.Behaviour(); got != want {
		t.Errorf("after refused changes: got provider %+v, want %+v", got, want)
	}
}

// TestLabPresenterModeWithoutScript is presenter mode as the server renders
// it: the card ?card names is the current one, and Previous and Next link
// to its neighbours (the first and last link to themselves).
func TestLabPresenterModeWithoutScript(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	s := newShopper(t, h)
	for _, tc := range []struct{ card, current, prev, next string }{
		{"3", "scenario-baseline", "/lab?present=1&card=2", "/lab?present=1&card=4"},
		{"", "scenario-double-click", "/lab?present=1&card=1", "/lab?present=1&card=2"},
		{"99", "scenario-double-click", "/lab?present=1&card=1", "/lab?present=1&card=2"},
		{"11", "scenario-worker-crash", "/lab?present=1&card=10", "/lab?present=1&card=11"},
	} {
		p := s.get(t, "/lab?present=1&card="+tc.card)
		current := p.doc.Find(".lab-card[data-current]")
		id, _ := current.Attr("id")
		prev, _ := p.testid("present-prev").Attr("href")
		next, _ := p.testid("present-next").Attr("href")
		if current.Length() != 1 || id != tc.current || prev != tc.prev || next != tc.next {
			t.Errorf("card=%q: got %d current (%s), previous %s, next %s; want %s, %s, %s",
				tc.card, current.Length(), id, prev, next, tc.current, tc.prev, tc.next)
		}
	}
	if p := s.get(t, "/lab"); p.doc.Find(".lab-card[data-current]").Length() != 0 || p.testid("present-nav").Length() != 0 {
		t.Error("/lab: got presenter mode, want every card")
	}
}

// TestLabCardSaysWhyItCannotRun: on a server whose PROVIDER_TIMEOUT is too
// short for the double-click's provider delay, its card says so and its Run
// button is disabled, and a post runs nothing.
func TestLabCardSaysWhyItCannotRun(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab, func(c *apptest.Setup) { c.LockTimeout, c.ProviderTimeout = 2*time.Second, 150*time.Millisecond })
	s := newShopper(t, h)
	p := s.get(t, "/lab")
	card := p.testid("scenario-double-click")
	if why := card.Find(`[data-testid=cannot-run]`).Text(); !strings.Contains(why, "PROVIDER_TIMEOUT is 150ms") {
		t.Errorf("got reason %q, want it to name this server's PROVIDER_TIMEOUT", why)
	}
	if _, disabled := card.Find(`[data-testid=run]`).Attr("disabled"); !disabled {
		t.Error("got the Run button enabled, want it disabled")
	}
	if n := p.doc.Find(`[data-testid=cannot-run]`).Length(); n != 1 {
		t.Errorf("got %d cards that cannot run, want 1", n)
	}
	if !strings.Contains(p.testid("scenario-ten-at-once").Find(".lab-setup").Text(), "provider takes 75 ms") {
		t.Errorf("ten at once: got setup %q, want the provider delay cut to fit", p.testid("scenario-ten-at-once").Find(".lab-setup").Text())
	}
	form := card.Find("form")
	action, _ := form.Attr("action")
	if r := s.post(t, action, formValues(form)); r.status != http.StatusSeeOther {
		t.Errorf("post: got %d, want 303", r.status)
	}
	if _, ran := labOf(h).Last("double-click"); ran {
		t.Error("the scenario ran, want it refused")
	}
}

// withLab is an option of apptest.New: the shop with the double-click lab
// mounted, as the demo's binary serves it; labOf is its runner.
func withLab(s *apptest.Setup) { s.Demo = &lab.Demo{} }

func labOf(h *apptest.Harness) *lab.Runner { return h.App.Demo.(*lab.Demo).Runner }
