package lab_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/demo/lab"
	"exactlyonce/fakestripe"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/db"
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
	for _, bad := range []string{"soon", "1ms", "999ms", "1h", "1\xffs"} {
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
	s := apptest.NewShopper(t, h)
	apptest.WantErrorPage(t, s.Get(t, "/lab"), http.StatusNotFound)
	if h.App.Demo != nil {
		t.Error("got a demo mounted without demo mode")
	}
}

// TestLabWithoutScript presses a Run button the way a browser without
// JavaScript does: a form post, a 303, and the apptest.Page with the result.
// The lab links its own stylesheet and script, which the lab serves (the
// shop's /static/ has none of the demo's), cached for good under the hashed
// URL the page links.
func TestLabServesItsAssets(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	p := apptest.NewShopper(t, h).Get(t, "/lab")
	var links []string
	p.Doc.Find(`link[rel=stylesheet][href^="/lab/static/"], script[src^="/lab/static/"]`).Each(func(_ int, el *goquery.Selection) {
		href, ok := el.Attr("href")
		if !ok {
			href, _ = el.Attr("src")
		}
		links = append(links, href)
	})
	if len(links) != 2 {
		t.Fatalf("got lab asset links %q, want the stylesheet and the script", links)
	}
	for _, link := range links {
		r := h.Do(t, http.MethodGet, link, "")
		if r.Status != http.StatusOK || len(r.Body) == 0 || !strings.Contains(r.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: got %d (%d bytes, Cache-Control %q), want 200, the file, immutable", link, r.Status, len(r.Body), r.Header.Get("Cache-Control"))
		}
	}
}

func TestLabWithoutScript(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	s := apptest.NewShopper(t, h)
	p := s.Get(t, "/lab")
	if p.Status != http.StatusOK {
		t.Fatalf("got %d, want 200", p.Status)
	}
	if n := p.Doc.Find(`[data-testid^="scenario-"]`).Length(); n != len(lab.Scenarios) {
		t.Errorf("got %d cards, want %d", n, len(lab.Scenarios))
	}
	card := p.TestID("scenario-tampered")
	if got := strings.TrimSpace(card.Find(`[data-testid=result]`).Text()); got != "Not run yet." {
		t.Errorf("before a run: got result %q, want Not run yet.", got)
	}
	form := card.Find("form")
	action, _ := form.Attr("action")

	after := s.Follow(t, s.Post(t, action, apptest.FormValues(form)))
	result := after.TestID("scenario-tampered").Find(`[data-testid=result]`)
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
	if n := after.TestID("inspector").Find(`[data-testid=key]`).Length(); n != 1 {
		t.Errorf("inspector: got %d keys, want the run's one key", n)
	}
	events := after.TestID("events").Find(`[data-testid=event]`)
	if n := events.Length(); n != 2 {
		t.Errorf("inspector: got %d events, want claimed and finished", n)
	}
	// The audit trail is told in words, not as the events' JSON.
	events.Find(`[data-testid=event-detail]`).Each(func(_ int, d *goquery.Selection) {
		if got := d.Text(); strings.ContainsAny(got, "{}\"") {
			t.Errorf("inspector: an event's detail reads %q, want it in words", got)
		}
	})
	// A finished key holds no lock: no countdown, no "expired".
	key := after.TestID("inspector").Find(`[data-testid=key]`)
	if got := strings.TrimSpace(key.Find(`[data-testid=key-lock]`).Text()); got != "none: finished, answer stored" {
		t.Errorf("inspector: a finished key's lock reads %q, want none: finished, answer stored", got)
	}
	if got := strings.TrimSpace(key.Find("td").Eq(4).Text()); got != "201" {
		t.Errorf("inspector: a finished key's stored response reads %q, want 201", got)
	}

	// Without the form's token the run is refused and nothing happens.
	if r := s.Post(t, action, url.Values{}); r.Status != http.StatusBadRequest {
		t.Errorf("without a CSRF token: got %d, want 400", r.Status)
	}
	if r := s.Post(t, "/lab/run/no-such", apptest.FormValues(form)); r.Status != http.StatusNotFound {
		t.Errorf("unknown scenario: got %d, want 404", r.Status)
	}
}

// TestLabFragments is what the apptest.Page script asks for: a card's result after
// a run, the inspector, and the live panel (none when nothing runs).
func TestLabFragments(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	s := apptest.NewShopper(t, h)
	form := s.Get(t, "/lab").TestID("scenario-refresh").Find("form")
	req, err := http.NewRequest(http.MethodPost, h.URL+"/lab/run/refresh", strings.NewReader(apptest.FormValues(form).Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Lab-Fragment", "card")
	p := s.Do(t, req)
	if p.Status != http.StatusOK {
		t.Fatalf("got %d, want 200", p.Status)
	}
	if got := p.Doc.Find(`[data-testid=result] [data-testid=replayed]`).Length(); got != 1 {
		t.Errorf("got %d replayed attempts in the fragment, want 1", got)
	}
	if p.TestID("scenario-refresh").Length() != 0 {
		t.Error("got the whole card, want only its result")
	}
	if r := s.Get(t, "/lab/inspector"); r.TestID("key").Length() != 1 {
		t.Errorf("inspector: got %d keys, want 1", r.TestID("key").Length())
	}
	if r := s.Get(t, "/lab/live"); r.Status != http.StatusNoContent {
		t.Errorf("live with no run in flight: got %d, want 204", r.Status)
	}
}

func TestLabFaultPanel(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	s := apptest.NewShopper(t, h)
	form := apptest.FormValues(s.Get(t, "/lab").TestID("faults").Find("form"))
	form.Set("delay_ms", "250")
	form.Set("fail", "decline")
	if r := s.Post(t, "/lab/provider", form); r.Status != http.StatusSeeOther {
		t.Fatalf("got %d, want 303", r.Status)
	}
	want := fakestripe.Behaviour{Delay: 250 * time.Millisecond, Fail: fakestripe.FaultDecline}
	if got := h.Provider.Behaviour(); got != want {
		t.Errorf("got provider %+v, want %+v", got, want)
	}
	p := s.Get(t, "/lab")
	if v, _ := p.TestID("fault-delay").Attr("value"); v != "250" {
		t.Errorf("panel shows latency %q, want 250", v)
	}
	if v, _ := p.TestID("fault-fail").Find("option[selected]").Attr("value"); v != "decline" {
		t.Errorf("panel shows fault %q, want decline", v)
	}
	form.Set("delay_ms", "-5")
	apptest.WantErrorPage(t, s.Post(t, "/lab/provider", form), http.StatusBadRequest)
	form.Set("delay_ms", "0")
	form.Set("fail", "explode")
	apptest.WantErrorPage(t, s.Post(t, "/lab/provider", form), http.StatusBadRequest)
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
	s := apptest.NewShopper(t, h)
	for _, tc := range []struct{ card, current, prev, next string }{
		{"3", "scenario-baseline", "/lab?present=1&card=2", "/lab?present=1&card=4"},
		{"", "scenario-double-click", "/lab?present=1&card=1", "/lab?present=1&card=2"},
		{"99", "scenario-double-click", "/lab?present=1&card=1", "/lab?present=1&card=2"},
		{"15", "scenario-worker-crash", "/lab?present=1&card=14", "/lab?present=1&card=16"},
		{"16", "scenario-last-mug", "/lab?present=1&card=15", "/lab?present=1&card=16"},
	} {
		p := s.Get(t, "/lab?present=1&card="+tc.card)
		current := p.Doc.Find(".lab-card[data-current]")
		id, _ := current.Attr("id")
		prev, _ := p.TestID("present-prev").Attr("href")
		next, _ := p.TestID("present-next").Attr("href")
		if current.Length() != 1 || id != tc.current || prev != tc.prev || next != tc.next {
			t.Errorf("card=%q: got %d current (%s), previous %s, next %s; want %s, %s, %s",
				tc.card, current.Length(), id, prev, next, tc.current, tc.prev, tc.next)
		}
	}
	if p := s.Get(t, "/lab"); p.Doc.Find(".lab-card[data-current]").Length() != 0 || p.TestID("present-nav").Length() != 0 {
		t.Error("/lab: got presenter mode, want every card")
	}
}

// TestLabCardSaysWhyItCannotRun: on a server whose PROVIDER_TIMEOUT is too
// short for the double-click's provider delay, its card says so and its Run
// button is disabled, and a post runs nothing.
func TestLabCardSaysWhyItCannotRun(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab, func(c *apptest.Setup) { c.LockTimeout, c.ProviderTimeout = 2*time.Second, 150*time.Millisecond })
	s := apptest.NewShopper(t, h)
	p := s.Get(t, "/lab")
	card := p.TestID("scenario-double-click")
	if why := card.Find(`[data-testid=cannot-run]`).Text(); !strings.Contains(why, "PROVIDER_TIMEOUT is 150ms") {
		t.Errorf("got reason %q, want it to name this server's PROVIDER_TIMEOUT", why)
	}
	if _, disabled := card.Find(`[data-testid=run]`).Attr("disabled"); !disabled {
		t.Error("got the Run button enabled, want it disabled")
	}
	if n := p.Doc.Find(`[data-testid=cannot-run]`).Length(); n != 1 {
		t.Errorf("got %d cards that cannot run, want 1", n)
	}
	if !strings.Contains(p.TestID("scenario-ten-at-once").Find(".lab-setup").Text(), "provider takes 75 ms") {
		t.Errorf("ten at once: got setup %q, want the provider delay cut to fit", p.TestID("scenario-ten-at-once").Find(".lab-setup").Text())
	}
	form := card.Find("form")
	action, _ := form.Attr("action")
	if r := s.Post(t, action, apptest.FormValues(form)); r.Status != http.StatusSeeOther {
		t.Errorf("post: got %d, want 303", r.Status)
	}
	if _, ran := labOf(h).Last("double-click"); ran {
		t.Error("the scenario ran, want it refused")
	}
}

// oneMug is the body of an API order of one mug.
const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

// With the lab mounted, every shop page's footer links it.
func TestShopPagesLinkTheLab(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	for _, path := range []string{"/", "/cart", "/pickup"} {
		p := apptest.NewShopper(t, h).Get(t, path)
		if href := p.TestID("nav-lab").AttrOr("href", ""); href != "/lab" {
			t.Errorf("%s: got lab link %q, want /lab", path, href)
		}
	}
}
