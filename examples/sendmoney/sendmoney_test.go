package main

import (
	"context"
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
// its server; see idem/README.md, Tests), a real HTTP server, and a browser that
// keeps its cookies, reads the form's fields and does not follow redirects.

func TestMain(m *testing.M) { idemtest.Main(m) }

// A double click: two submits of one form at once send once, and both are
// sent to the same receipt; only the one that waited for the other is
// marked as a replay.
func TestDoubleSubmitSendsOnce(t *testing.T) {
	app := start(t)
	b := newBrowser(t, app)
	form := b.openForm()
	form.Set("friend", "Ada")
	form.Set("amount", "20")

	// The transfers table is locked, so the first submit to claim the key
	// holds it, in its INSERT, until the other has arrived.
	lock := app.lockTransfers()
	answers := make([]answer, 2)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = b.submit(form) })
	}
	app.waitForBlockedInsert()
	time.Sleep(100 * time.Millisecond) // margin for the second submit to reach the server
	lock.release()
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
	if n := app.transfers(); n != 1 {
		t.Fatalf("got %d transfers, want 1", n)
	}
	if got := b.get(answers[0].Header.Get("Location")); !strings.Contains(got, "You sent Ada €20") {
		t.Errorf("receipt: got %q, want it to name Ada and €20", got)
	}
}

// The JSON route under Idempotency-Key: a retry gets the first answer byte
// for byte, marked replayed; another body under the key is refused 422; a
// body refused before the work stores nothing, so the corrected one under
// the same key is sent; a request with no account is 401. One transfer per
// key, whatever was retried.
func TestJSONRoute(t *testing.T) {
	app := start(t)
	first := app.postJSON("k1", "alice", `{"friend":"Ada","amount":20}`)
	if first.status != http.StatusCreated || first.header.Get(idem.HeaderReplayed) != "" ||
		!strings.HasPrefix(first.header.Get("Location"), "/api/transfers/") || !strings.Contains(first.body, `"friend":"Ada"`) {
		t.Fatalf("first: got %d %v %s, want a fresh 201 with a Location and the transfer", first.status, first.header, first.body)
	}
	again := app.postJSON("k1", "alice", `{"amount": 20, "friend": "Ada"}`) // the same members, in another order
	if again.status != http.StatusCreated || again.body != first.body || again.header.Get(idem.HeaderReplayed) != "true" ||
		again.header.Get("Location") != first.header.Get("Location") {
		t.Fatalf("a retry: got %d %v %s, want the first answer byte for byte, replayed", again.status, again.header, again.body)
	}
	if got := app.postJSON("k1", "alice", `{"friend":"Ada","amount":30}`); got.status != http.StatusUnprocessableEntity ||
		!strings.Contains(got.body, "idempotency-key-reused") {
		t.Fatalf("another amount under the key: got %d %s, want 422 idempotency-key-reused", got.status, got.body)
	}
	if got := app.postJSON("k2", "alice", `{"friend":"","amount":20}`); got.status != http.StatusBadRequest {
		t.Fatalf("no friend: got %d %s, want 400", got.status, got.body)
	}
	if got := app.postJSON("k2", "alice", `{"friend":"Grace","amount":5}`); got.status != http.StatusCreated || got.header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("the corrected body under the refused one's key: got %d %v %s, want a fresh 201", got.status, got.header, got.body)
	}
	if got := app.postJSON("k3", "", `{"friend":"Ada","amount":20}`); got.status != http.StatusUnauthorized ||
		got.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("no account: got %d %v %s, want a 401 problem+json", got.status, got.header, got.body)
	}
	if n := app.transfers(); n != 2 {
		t.Fatalf("got %d transfers, want 2", n)
	}
	if got := app.getJSON(first.header.Get("Location"), "alice"); got.status != http.StatusOK || strings.TrimSpace(got.body) != strings.TrimSpace(first.body) {
		t.Errorf("its Location: got %d %s, want 200 and the transfer", got.status, got.body)
	}
	if got := app.getJSON(first.header.Get("Location"), "mallory"); got.status != http.StatusNotFound {
		t.Errorf("its Location to another account: got %d %s, want 404", got.status, got.body)
	}
}

// The page that sends the form with fetch loads the kit's module from
// where the app serves it, as JavaScript (a browser runs a module of no
// other type). What the module sends is the JSON route's: TestJSONRoute,
// and in Chromium the shop's internal/browsertest/idemjs_test.go.
func TestFetchPage(t *testing.T) {
	app := start(t)
	page := app.getJSON("/fetch", "")
	if page.status != http.StatusOK || !strings.Contains(page.body, `import { enhance } from "/idem/idem.js";`) ||
		!strings.Contains(page.body, `action="/api/transfers"`) {
		t.Fatalf("GET /fetch: got %d %s, want the page importing /idem/idem.js, its form sent to /api/transfers", page.status, page.body)
	}
	module := app.getJSON("/idem/idem.js", "")
	if module.status != http.StatusOK || !strings.HasPrefix(module.header.Get("Content-Type"), "text/javascript") ||
		!strings.Contains(module.body, "export function enhance(") {
		t.Fatalf("GET /idem/idem.js: got %d %v, want the module as JavaScript", module.status, module.header)
	}
}

// Back, then the same form sent again: the first answer, replayed. Back, an
// amount changed, sent again with the same key: refused, nothing sent.
func TestResubmit(t *testing.T) {
	app := start(t)
	b := newBrowser(t, app)
	form := b.openForm()
	form.Set("friend", "Grace")
	form.Set("amount", "20")
	first := b.submit(form)
	if first.StatusCode != http.StatusSeeOther || first.Header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("first: got %d %v, want a 303 not marked as a replay", first.StatusCode, first.Header)
	}
	again := b.submit(form)
	if again.StatusCode != http.StatusSeeOther || again.Header.Get("Location") != first.Header.Get("Location") ||
		again.Header.Get(idem.HeaderReplayed) != "true" {
		t.Fatalf("again: got %d %v, want the first 303, marked as a replay", again.StatusCode, again.Header)
	}
	form.Set("amount", "30")
	changed := b.submit(form)
	if changed.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(refused(t, changed), "already sent") {
		t.Fatalf("changed amount: got %d %q, want 422, the form already sent", changed.StatusCode, changed.Body)
	}
	if n := app.transfers(); n != 1 {
		t.Fatalf("got %d transfers, want 1", n)
	}
}

// A submit that died holding its key (the process was killed before its
// transaction committed) leaves the key started: the maintenance releases
// it, and the form sends when it is submitted again.
func TestMaintenanceSettlesAStuckKey(t *testing.T) {
	app := start(t)
	b := newBrowser(t, app)
	form := b.openForm()
	form.Set("friend", "Alan")
	form.Set("amount", "5")
	visitor, key := b.cookie("visitor"), form.Get(idem.KeyField)
	// The dead attempt: a claim of the key whose lease then runs out, with
	// nobody left to finish or release it.
	if _, err := app.keys.Claim(t.Context(), idem.Request{Scope: visitor, Key: key, Fingerprint: []byte("the dead attempt's")}); err != nil {
		t.Fatal(err)
	}
	idemtest.ExpireLock(t, app.pool, visitor, key)
	err := idem.Poll(ctxWithin(t, 10*time.Second), func(ctx context.Context) (bool, error) {
		_, err := app.keys.Get(ctx, visitor, key)
		return errors.Is(err, idem.ErrNotFound), nil
	})
	if err != nil {
		t.Fatalf("the stuck key was not released by the maintenance: %v", err)
	}
	sent := b.submit(form)
	if sent.StatusCode != http.StatusSeeOther || sent.Header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("after the release: got %d %v, want a fresh 303", sent.StatusCode, sent.Header)
	}
	if n := app.transfers(); n != 1 {
		t.Fatalf("got %d transfers, want 1", n)
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
	s, err := newServer(pool, keys, []byte(strings.Repeat("s", 32)))
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
	ts := httptest.NewServer(s.routes())
	t.Cleanup(ts.Close)
	return &app{t: t, url: ts.URL, pool: pool, keys: keys}
}

type jsonAnswer struct {
	status int
	header http.Header
	body   string
}

// postJSON sends body to POST /api/transfers under key, as account.
func (a *app) postJSON(key, account, body string) jsonAnswer {
	a.t.Helper()
	req, err := http.NewRequest(http.MethodPost, a.url+"/api/transfers", strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", `"`+key+`"`)
	if account != "" {
		req.Header.Set("Authorization", "Bearer "+account)
	}
	return a.do(req)
}

func (a *app) getJSON(path, account string) jsonAnswer {
	a.t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.url+path, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+account)
	return a.do(req)
}

func (a *app) do(req *http.Request) jsonAnswer {
	a.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return jsonAnswer{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (a *app) transfers() int {
	a.t.Helper()
	var n int
	if err := a.pool.QueryRow(context.Background(), `SELECT count(*) FROM transfers`).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

type tableLock struct{ release func() }

// lockTransfers holds a lock on transfers that makes every INSERT wait
// until release.
func (a *app) lockTransfers() tableLock {
	a.t.Helper()
	tx, err := a.pool.Begin(context.Background())
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `LOCK TABLE transfers IN SHARE MODE`); err != nil {
		a.t.Fatal(err)
	}
	return tableLock{release: func() { tx.Rollback(context.Background()) }} //nolint:errcheck // releasing the lock is all it is for
}

// waitForBlockedInsert waits until a session waits for the lock.
func (a *app) waitForBlockedInsert() {
	a.t.Helper()
	err := idem.Poll(ctxWithin(a.t, 10*time.Second), func(ctx context.Context) (bool, error) {
		var n int
		err := a.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'transfers'::regclass`).Scan(&n)
		return n > 0, err
	})
	if err != nil {
		a.t.Fatalf("no submit got to its INSERT: %v", err)
	}
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
	resp, err := b.c.Get(b.base.JoinPath(path).String())
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
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

// answer is a response as the tests look at it.
type answer struct {
	StatusCode int
	Header     http.Header
	Body       string
}

func (b *browser) submit(form url.Values) answer {
	resp, err := b.c.PostForm(b.base.JoinPath("/send").String(), form)
	if err != nil {
		b.t.Error(err) // not Fatal: submits run in goroutines too
		return answer{Header: http.Header{}}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(body)}
}

func (b *browser) cookie(name string) string {
	for _, c := range b.c.Jar.Cookies(b.base) {
		if c.Name == name {
			return c.Value
		}
	}
	b.t.Fatalf("no cookie %s", name)
	return ""
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
