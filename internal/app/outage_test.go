package app_test

import (
	"context"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/database"
	"exactlyonce/internal/problem"
	"exactlyonce/localpg"
)

// TestDatabaseOutage stops the application's PostgreSQL under a running
// server, twice — a clean stop (pg_ctl stop -m fast, which ends sessions
// with SQLSTATE 57P01) and a crash (-m immediate) — and sends real HTTP
// requests meanwhile: every answer during the outage is a 503 with
// Retry-After, problem+json for the API and an HTML page for the browser,
// /readyz is red; after the restart the same pool serves 2xx again without
// being told, and an order refused during the outage is placed with its key.
//
// The server is the test's own, not pgtest's shared one, which the
// package's other tests are using.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg, opts, pool := ownDatabase(t)
	h := apptest.NewOnPool(t, pool)
	c := h.NewCustomer(t)
	b := newBrowser(t, h)

	for _, outage := range []struct {
		name string
		stop func(context.Context) error
	}{
		{"stop", pg.Stop},
		{"crash", pg.Crash},
	} {
		key := "during-" + outage.name
		pickupForm := b.pickupForm(t, "Ada "+outage.name)
		if err := outage.stop(ctx); err != nil {
			t.Fatal(err)
		}

		// Each of these needs the database: the catalog, a customer
		// insert, a token look-up, a claim, the readiness probe.
		wantUnavailable(t, h, "new customer", http.MethodPost, "/api/customers", `{"name":"x"}`)
		wantUnavailable(t, h, "order", http.MethodPost, "/api/orders", oneMug,
			"Authorization", "Bearer "+c.Token, "Idempotency-Key", key)
		wantUnavailable(t, h, "orders", http.MethodGet, "/api/orders", "", "Authorization", "Bearer "+c.Token)
		// The kit's routes too: its key store answers ErrUnavailable.
		wantUnavailable(t, h, "pickup", http.MethodPost, "/api/pickups", `{"slot":"sat-am","name":"Ada"}`,
			"Authorization", "Bearer "+c.Token, "Idempotency-Key", `"pickup-`+key+`"`)
		if r := b.post(t, "/pickup", pickupForm); r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s: pickup form: got %d (Retry-After %q), want a 503 page with Retry-After", outage.name, r.Status, r.Header.Get("Retry-After"))
		}
		if r := h.Do(t, http.MethodGet, "/readyz", ""); r.Status != http.StatusServiceUnavailable {
			t.Errorf("%s: /readyz: got %d, want 503", outage.name, r.Status)
		}
		wantUnavailablePage(t, h)

		if _, err := localpg.Start(ctx, opts); err != nil {
			t.Fatal(err)
		}
		waitReady(t, h)
		if r := h.PlaceOrder(t, c, key, oneMug); r.Status != http.StatusCreated {
			t.Errorf("%s: order after restart: got %d %s, want 201", outage.name, r.Status, r.Body)
		}
		if r := h.Do(t, http.MethodPost, "/api/pickups", `{"slot":"sat-am","name":"Ada"}`,
			"Authorization", "Bearer "+c.Token, "Idempotency-Key", `"pickup-`+key+`"`); r.Status != http.StatusCreated {
			t.Errorf("%s: pickup after restart: got %d %s, want 201", outage.name, r.Status, r.Body)
		}
		if r := b.post(t, "/pickup", pickupForm); r.Status != http.StatusSeeOther {
			t.Errorf("%s: pickup form after restart: got %d, want 303 to the reservation", outage.name, r.Status)
		}
		if r := h.Do(t, http.MethodGet, "/", ""); r.Status != http.StatusOK {
			t.Errorf("%s: catalog page after restart: got %d, want 200", outage.name, r.Status)
		}
	}
	h.WantStats(t, 2, 2)
}

// ownDatabase starts a PostgreSQL of the test's own, which it may stop and
// start again (localpg.Start with the options returned), migrated, and a
// pool on it.
func ownDatabase(t *testing.T) (*localpg.Server, localpg.Options, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	dir, err := os.MkdirTemp("/tmp", "outage-")
	if err != nil {
		t.Fatal(err)
	}
	opts := localpg.Options{DataDir: dir, Throwaway: true, CrashSafe: true}
	pg, err := localpg.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Stop(context.Background()) })
	pool, err := database.Open(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := database.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := fakestripe.Migrate(ctx, pool); err != nil { // the fake's schema, for its server (stripetest)
		t.Fatal(err)
	}
	return pg, opts, pool
}

// wantUnavailable sends a request during the outage and wants the API's
// answer to it: 503 service-unavailable, problem+json, with Retry-After.
func wantUnavailable(t *testing.T, h *apptest.Harness, what, method, path, body string, headers ...string) {
	t.Helper()
	r := h.Do(t, method, path, body, headers...)
	var p problem.Problem
	if r.Header.Get("Content-Type") == problem.ContentType {
		r.JSON(t, &p)
	}
	if r.Status != http.StatusServiceUnavailable || p.Type != "/problems/"+problem.Unavailable.Slug || r.Header.Get("Retry-After") == "" {
		t.Errorf("%s during the outage: got %d %s (Content-Type %q, Retry-After %q), want 503 %s with Retry-After",
			what, r.Status, r.Body, r.Header.Get("Content-Type"), r.Header.Get("Retry-After"), problem.Unavailable.Slug)
	}
}

// wantUnavailablePage loads the catalog page until the in-memory catalog is
// too old to serve and the page needs the database, and wants the browser's
// answer to the outage then: a 503 HTML page with Retry-After.
func wantUnavailablePage(t *testing.T, h *apptest.Harness) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := h.Do(t, http.MethodGet, "/", "")
		if r.Status != http.StatusOK {
			media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if r.Status != http.StatusServiceUnavailable || media != "text/html" || r.Header.Get("Retry-After") == "" {
				t.Errorf("catalog page during the outage: got %d (Content-Type %q, Retry-After %q), want a 503 HTML page with Retry-After",
					r.Status, r.Header.Get("Content-Type"), r.Header.Get("Retry-After"))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the catalog page still answers 200 from memory after 30 s of outage")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitReady polls /readyz until it is green again: the pool reconnects on
// its own.
func waitReady(t *testing.T, h *apptest.Harness) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := h.Do(t, http.MethodGet, "/readyz", "")
		if r.Status == http.StatusOK {
			return
		}
		if r.Status != http.StatusServiceUnavailable {
			t.Errorf("/readyz while PostgreSQL restarts: got %d, want 503 or 200", r.Status)
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz is not green 60 s after PostgreSQL restarted")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// browser keeps cookies and does not follow redirects, as a shopper's
// browser without JavaScript would be seen by the server.
type browser struct {
	h      *apptest.Harness
	client *http.Client
}

func newBrowser(t *testing.T, h *apptest.Harness) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{h: h, client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// pickupForm loads the pickup form, while the database is up, and fills it.
func (b *browser) pickupForm(t *testing.T, name string) url.Values {
	t.Helper()
	resp, err := b.client.Get(b.h.URL + "/pickup")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /pickup: got %d, %v", resp.StatusCode, err)
	}
	form := url.Values{}
	doc.Find(`[data-testid="pickup-form"] input[type="hidden"]`).Each(func(_ int, in *goquery.Selection) {
		form.Set(in.AttrOr("name", ""), in.AttrOr("value", ""))
	})
	form.Set("slot", "sat-am")
	form.Set("name", name)
	return form
}

func (b *browser) post(t *testing.T, path string, form url.Values) apptest.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.h.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.h.URL)
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return apptest.Response{Status: resp.StatusCode, Header: resp.Header}
}
