package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/net/html"

	"exactlyonce/idem"
	"exactlyonce/idem/idemtest"
)

// The example end to end: a real PostgreSQL (TEST_DATABASE_URL names
// its server; see idem/README.md, Tests), a real HTTP server, a browser that keeps
// its cookies, reads the form's fields and does not follow redirects, and
// an API client.

func TestMain(m *testing.M) { idemtest.Main(m) }

// A double click: two submits of one form at once reply once, and both are
// sent to the same RSVP; only the one that waited for the other is marked
// as a replay.
func TestFormDoubleSubmitRepliesOnce(t *testing.T) {
	app := start(t)
	b := newBrowser(t, app)
	form := b.openForm()
	form.Set("name", "Ada")
	form.Set("guests", "3")

	// The rsvps table is locked, so the first submit to claim the key holds
	// it, in its INSERT, until the other has arrived.
	release := app.lockRSVPs()
	answers := make([]answer, 2)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = b.submit(form) })
	}
	app.waitForBlockedInsert()
	time.Sleep(100 * time.Millisecond) // margin for the second submit to reach the server
	release()
	wg.Wait()

	replayed := 0
	for _, a := range answers {
		if a.StatusCode != http.StatusSeeOther || a.Header.Get("Location") != answers[0].Header.Get("Location") {
			t.Fatalf("got %d to %q and %d to %q, want the same 303 for both", answers[0].StatusCode, answers[0].Header.Get("Location"),
				answers[1].StatusCode, answers[1].Header.Get("Location"))
		}
		if a.Header.Get(idem.HeaderReplayed) == "true" {
			replayed++
		}
	}
	if replayed != 1 {
		t.Errorf("got %d answers marked %s: true, want 1 (the second)", replayed, idem.HeaderReplayed)
	}
	if n := app.rsvps(); n != 1 {
		t.Fatalf("got %d RSVPs, want 1", n)
	}
	if got := b.get(answers[0].Header.Get("Location")); !strings.Contains(got, "Ada, party of 3") {
		t.Errorf("the RSVP: got %q, want Ada, party of 3", got)
	}
}

// A form refused by the app's own check (11 guests) stores nothing: the
// corrected form goes through with the same key. Back, the guest count
// changed, sent again with that key: refused, nothing written.
func TestFormResubmit(t *testing.T) {
	app := start(t)
	b := newBrowser(t, app)
	form := b.openForm()
	form.Set("name", "Grace")
	form.Set("guests", "11")
	if bad := b.submit(form); bad.StatusCode != http.StatusBadRequest || !strings.Contains(bad.Body, "1 to 10") {
		t.Fatalf("11 guests: got %d %q, want 400 and the form again, saying 1 to 10", bad.StatusCode, bad.Body)
	}
	form.Set("guests", "2")
	corrected := b.submit(form)
	if corrected.StatusCode != http.StatusSeeOther || corrected.Header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("corrected, with the same key: got %d %v, want a fresh 303", corrected.StatusCode, corrected.Header)
	}
	form.Set("guests", "4")
	changed := b.submit(form)
	if changed.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(refused(t, changed), "already sent") {
		t.Fatalf("another guest count with the key: got %d %q, want 422, the form already sent", changed.StatusCode, changed.Body)
	}
	if n := app.rsvps(); n != 1 {
		t.Fatalf("got %d RSVPs, want 1", n)
	}
	if got := b.get(corrected.Header.Get("Location")); !strings.Contains(got, "Grace, party of 2") {
		t.Errorf("the RSVP: got %q, want Grace, party of 2", got)
	}
}

// A retry gets the first answer byte for byte, marked as a replay, whatever
// the spacing and order of its JSON; the key with another guest count is
// refused; a request the handler refused (11 guests) leaves its key free
// for the corrected one.
func TestAPIRetries(t *testing.T) {
	app := start(t)
	first := app.post("alice", `"r-1"`, `{"name": "Ada", "guests": 3}`)
	if first.StatusCode != http.StatusCreated || first.Header.Get(idem.HeaderReplayed) != "" || first.Header.Get("Location") == "" {
		t.Fatalf("first: got %d %s %v, want a 201 with a Location, not marked as a replay", first.StatusCode, first.Body, first.Header)
	}
	retry := app.post("alice", `"r-1"`, `{"guests":3,"name":"Ada"}`)
	if retry.StatusCode != http.StatusCreated || retry.Body != first.Body || retry.Header.Get("Location") != first.Header.Get("Location") ||
		retry.Header.Get(idem.HeaderReplayed) != "true" {
		t.Fatalf("retry: got %d %q %v, want the first answer (%q), marked as a replay", retry.StatusCode, retry.Body, retry.Header, first.Body)
	}
	for _, tc := range []struct {
		name, key, body string
		want            int
		problem         string
	}{
		{"another guest count with the key", `"r-1"`, `{"name": "Ada", "guests": 4}`, http.StatusUnprocessableEntity, "/problems/idempotency-key-reused"},
		{"no key", ``, `{"name": "Ada", "guests": 4}`, http.StatusBadRequest, "/problems/missing-idempotency-key"},
		{"11 guests, refused by the handler", `"r-2"`, `{"name": "Alan", "guests": 11}`, http.StatusBadRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := app.post("alice", tc.key, tc.body)
			var p struct{ Type string }
			json.Unmarshal([]byte(got.Body), &p) //nolint:errcheck // checked below
			if got.StatusCode != tc.want || p.Type != tc.problem {
				t.Fatalf("got %d %s, want %d %s", got.StatusCode, got.Body, tc.want, tc.problem)
			}
		})
	}
	if n := app.rsvps(); n != 1 {
		t.Fatalf("got %d RSVPs, want 1", n)
	}
	corrected := app.post("alice", `"r-2"`, `{"name": "Alan", "guests": 2}`)
	if corrected.StatusCode != http.StatusCreated || corrected.Header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("the corrected request with the refused one's key: got %d %s, want a fresh 201", corrected.StatusCode, corrected.Body)
	}
	if got := app.get(first.Header.Get("Location")); got != strings.TrimSpace(first.Body) {
		t.Errorf("GET the Location: got %s, want %s", got, first.Body)
	}
}

// A request that died holding its key (the process was killed before its
// transaction committed) leaves the key started: the maintenance releases
// it, and the client's retry makes the RSVP.
func TestMaintenanceSettlesAStuckKey(t *testing.T) {
	app := start(t)
	// The dead attempt: a claim of the key whose lease then runs out, with
	// nobody left to finish or release it.
	if _, err := app.keys.Claim(t.Context(), idem.Request{Scope: "alice", Key: "r-1", Fingerprint: []byte("the dead attempt's")}); err != nil {
		t.Fatal(err)
	}
	idemtest.ExpireLock(t, app.pool, "alice", "r-1")
	err := idem.Poll(ctxWithin(t, 10*time.Second), func(ctx context.Context) (bool, error) {
		_, err := app.keys.Get(ctx, "alice", "r-1")
		return errors.Is(err, idem.ErrNotFound), nil
	})
	if err != nil {
		t.Fatalf("the stuck key was not released by the maintenance: %v", err)
	}
	retry := app.post("alice", `"r-1"`, `{"name": "Ada", "guests": 3}`)
	if retry.StatusCode != http.StatusCreated || retry.Header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("after the release: got %d %s, want a fresh 201", retry.StatusCode, retry.Body)
	}
	if n := app.rsvps(); n != 1 {
		t.Fatalf("got %d RSVPs, want 1", n)
	}
}

type app struct {
	t    *testing.T
	url  string
	pool *pgxpool.Pool
	keys *idem.Store
}

// start runs the example as run does, on a database of the test's own, with
// the maintenance's passes a few milliseconds apart instead of seconds.
func start(t *testing.T) *app {
	t.Helper()
	pool := idemtest.NewPool(t)
	if err := migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	keys := idem.NewStore(pool, idem.Options{})
	e, err := newServer(pool, keys, []byte(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	maintained := make(chan struct{})
	go func() {
		idem.Maintain(ctx, idem.Maintenance{Store: keys, Grace: time.Millisecond, CompleteEvery: 20 * time.Millisecond})
		close(maintained)
	}()
	t.Cleanup(func() { cancel(); <-maintained })
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	return &app{t: t, url: ts.URL, pool: pool, keys: keys}
}

func (a *app) rsvps() int {
	a.t.Helper()
	var n int
	if err := a.pool.QueryRow(context.Background(), `SELECT count(*) FROM rsvps`).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// lockRSVPs holds a lock on rsvps that makes every INSERT wait until
// release is called.
func (a *app) lockRSVPs() (release func()) {
	a.t.Helper()
	tx, err := a.pool.Begin(context.Background())
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `LOCK TABLE rsvps IN SHARE MODE`); err != nil {
		a.t.Fatal(err)
	}
	return func() { tx.Rollback(context.Background()) } //nolint:errcheck // releasing the lock is all it is for
}

// waitForBlockedInsert waits until a session waits for the lock.
func (a *app) waitForBlockedInsert() {
	a.t.Helper()
	err := idem.Poll(ctxWithin(a.t, 10*time.Second), func(ctx context.Context) (bool, error) {
		var n int
		err := a.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'rsvps'::regclass`).Scan(&n)
		return n > 0, err
	})
	if err != nil {
		a.t.Fatalf("no submit got to its INSERT: %v", err)
	}
}

// answer is a response as the tests look at it, its body byte for byte.
type answer struct {
	StatusCode int
	Header     http.Header
	Body       string
}

func do(t *testing.T, c *http.Client, req *http.Request) answer {
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err) // not Fatal: requests run in goroutines too
		return answer{Header: http.Header{}}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(body)}
}

// post sends body to POST /api/rsvps as account, under key unless it is
// empty.
func (a *app) post(account, key, body string) answer {
	req, _ := http.NewRequest(http.MethodPost, a.url+"/api/rsvps", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+account)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return do(a.t, http.DefaultClient, req)
}

func (a *app) get(path string) string {
	req, _ := http.NewRequest(http.MethodGet, a.url+path, nil)
	return strings.TrimSpace(do(a.t, http.DefaultClient, req).Body)
}

// browser is an HTTP client with cookies that shows each redirect instead
// of following it.
type browser struct {
	t    *testing.T
	base *url.URL
	c    *http.Client
}

func newBrowser(t *testing.T, a *app) *browser {
	jar, _ := cookiejar.New(nil)
	base, _ := url.Parse(a.url)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) string {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base.JoinPath(path).String(), nil)
	return do(b.t, b.c, req).Body
}

// openForm loads the form and returns the values of its fields, the
// hidden ones that carry its key included.
func (b *browser) openForm() url.Values {
	b.t.Helper()
	doc, err := html.Parse(strings.NewReader(b.get("/")))
	if err != nil {
		b.t.Fatal(err)
	}
	fields := url.Values{}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "input" {
			fields.Set(attr(n, "name"), attr(n, "value"))
		}
	}
	if fields.Get(idem.KeyField) == "" {
		b.t.Fatalf("the form carries no %s field: %v", idem.KeyField, fields)
	}
	return fields
}

func (b *browser) submit(form url.Values) answer {
	req, _ := http.NewRequest(http.MethodPost, b.base.JoinPath("/rsvp").String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(b.t, b.c, req)
}

// refused is the text of the kit's refusal page (Form.WriteError) in a.
func refused(t *testing.T, a answer) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(a.Body))
	if err != nil {
		t.Fatal(err)
	}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && attr(n, "data-testid") == "refused" {
			var text strings.Builder
			for c := range n.Descendants() {
				if c.Type == html.TextNode {
					text.WriteString(c.Data)
				}
			}
			return text.String()
		}
	}
	return ""
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func ctxWithin(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
