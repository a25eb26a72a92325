package idemtest

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
)

// formSecret signs the suite's form keys.
const formSecret = "a form secret of at least thirty-two bytes"

// formApp is the suite's form through a's Form, built from o with the
// suite's store and secret: GET /send answers a key minted for the visitor
// (as JSON, for the suite to read); POST /send submits the field amount,
// whose work sends the visitor to /sent, except for amount 0, which fails
// with the application's own error. The kit's refusals are written by
// WriteError; the application's own errors are answered 418. sent counts
// the works that ran, scope holds the last one's lock's Scope.
type formApp struct {
	srv   http.Handler
	core  *idem.Form
	sent  atomic.Int32
	scope atomic.Value // string
	hold  func()       // when set, run by the work before it answers
}

func newFormApp(t *testing.T, a Adapter, store *idem.Store, o idemhttp.FormOptions) *formApp {
	t.Helper()
	o.Store, o.Secret = store, []byte(formSecret)
	app := &formApp{}
	h := func(w http.ResponseWriter, r *http.Request, key func() (idem.FormKey, error), submit func([]string, idem.Work) error, writeError func(error) bool) error {
		if r.Method == http.MethodGet {
			k, err := key()
			if err != nil {
				return err
			}
			w.Header().Set("Content-Type", "application/json")
			return json.NewEncoder(w).Encode(k)
		}
		amount := r.FormValue("amount")
		err := submit([]string{amount}, func(ctx context.Context, _ pgx.Tx) (idem.Response, error) {
			if amount == "0" {
				return idem.Response{}, errApp
			}
			if app.hold != nil {
				app.hold()
			}
			app.sent.Add(1)
			app.scope.Store(idem.LockOf(ctx).Scope)
			return idem.Redirect("/sent"), nil
		})
		if err != nil && !writeError(err) {
			if !errors.Is(err, errApp) {
				t.Errorf("WriteError declined the kit's %v", err)
			}
			w.WriteHeader(http.StatusTeapot)
		}
		return nil
	}
	var err error
	if app.srv, app.core, err = a.Form(o, h); err != nil {
		t.Fatal(err)
	}
	return app
}

// A visitor of a form: named by the header X-Visitor (the suite's Visitor),
// or by the cookie the default Visitor set.
type visitor struct {
	name   string
	cookie *http.Cookie
}

func (v visitor) send(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	if v.name != "" {
		req.Header.Set("X-Visitor", v.name)
	}
	if v.cookie != nil {
		req.AddCookie(v.cookie)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func (v visitor) submit(app *formApp, key idem.FormKey, amount string) *httptest.ResponseRecorder {
	body := url.Values{idem.KeyField: {key.Key}, idem.SigField: {key.Sig}, "amount": {amount}}.Encode()
	req := httptest.NewRequest(http.MethodPost, "/send", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return v.send(app.srv, req)
}

func (v visitor) status(app *formApp, key string) *httptest.ResponseRecorder {
	return v.send(app.srv, httptest.NewRequest(http.MethodGet, "/send/status?"+url.Values{"key": {key}}.Encode(), nil))
}

// byHeader is the suite's Visitor, so that a test can be two visitors.
func byHeader(_ http.ResponseWriter, r *http.Request) (string, error) {
	return r.Header.Get("X-Visitor"), nil
}

// inLayout is a Layout that marks the application's layout and heads it
// with the page's title.
func inLayout(title string, body idemhttp.Component) idemhttp.Component {
	return layout{title, body}
}

type layout struct {
	title string
	body  idemhttp.Component
}

func (l layout) Render(ctx context.Context, w io.Writer) error {
	if _, err := io.WriteString(w, "<main class=layout><h1>"+html.EscapeString(l.title)+"</h1>"); err != nil {
		return err
	}
	return l.body.Render(ctx, w)
}

// formConformance runs the form's promise through a.
func formConformance(t *testing.T, a Adapter, store *idem.Store) {
	// The key minted when the form is rendered (with the default Visitor,
	// a cookie), submitted twice, runs the work once, which is handed the
	// visitor in its lock, and both get the same redirect, the second
	// marked as a replay.
	t.Run(a.Name+"/a form's key minted at render, submitted twice", func(t *testing.T) {
		app := newFormApp(t, a, store, idemhttp.FormOptions{})
		rendered := httptest.NewRecorder()
		app.srv.ServeHTTP(rendered, httptest.NewRequest(http.MethodGet, "/send", nil))
		var key idem.FormKey
		if err := json.NewDecoder(rendered.Body).Decode(&key); err != nil || len(rendered.Result().Cookies()) != 1 {
			t.Fatalf("the render: got %d %v (%v), want a key and the visitor's cookie", rendered.Code, rendered.Result().Cookies(), err)
		}
		alice := visitor{cookie: rendered.Result().Cookies()[0]}
		first, again := alice.submit(app, key, "10"), alice.submit(app, key, "10")
		if first.Code != http.StatusSeeOther || first.Header().Get("Location") != "/sent" || first.Header().Get(idem.HeaderReplayed) != "" {
			t.Fatalf("first: got %d %v, want a fresh 303 to /sent", first.Code, first.Header())
		}
		if again.Code != http.StatusSeeOther || again.Header().Get("Location") != "/sent" || again.Header().Get(idem.HeaderReplayed) != "true" || app.sent.Load() != 1 {
			t.Fatalf("again: got %d %v after %d sends, want the same 303, replayed, after 1", again.Code, again.Header(), app.sent.Load())
		}
		if got := app.scope.Load(); got != alice.cookie.Value {
			t.Fatalf("the work's lock's Scope: got %v, want the visitor %s", got, alice.cookie.Value)
		}
	})

	// Without FormOptions.StartOver, the status route sends a visitor whose
	// submit left nothing stored to "/", on every adapter: idemhttp sets
	// the default, and the Echo adapters read it from there.
	t.Run(a.Name+"/a form's status route starts over at / by default", func(t *testing.T) {
		app := newFormApp(t, a, store, idemhttp.FormOptions{Visitor: byHeader})
		if rec := (visitor{name: "alice"}).status(app, app.core.Mint("alice").Key); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
			t.Fatalf("a key with nothing stored: %d %v, want a 303 to /", rec.Code, rec.Header())
		}
	})

	// The kit's refusals of a submit are rendered in the form's Layout,
	// titled and worded for the visitor, with a way back to StartOver; the
	// application's own errors are left to it.
	t.Run(a.Name+"/a form's refusals in the visitor's words", func(t *testing.T) {
		app := newFormApp(t, a, store, idemhttp.FormOptions{Visitor: byHeader, Layout: inLayout, StartOver: "/send"})
		alice, bob := visitor{name: "alice"}, visitor{name: "bob"}
		key := app.core.Mint("alice")
		if rec := alice.submit(app, key, "5"); rec.Code != http.StatusSeeOther {
			t.Fatalf("first submit: got %d %s, want 303", rec.Code, rec.Body)
		}
		rec := alice.submit(app, key, "6")
		body := rec.Body.String()
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "<main class=layout><h1>This form was already sent</h1>") ||
			!strings.Contains(body, "already sent with other values") || !strings.Contains(body, `href="/send"`) ||
			rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("the same key with other values: %d %q, want 422 in the layout, in the visitor's words, with a way back", rec.Code, body)
		}
		if strings.Contains(strings.ToLower(body), "idempotency") {
			t.Fatalf("the visitor is told %q", body)
		}
		if rec := bob.submit(app, key, "5"); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "cannot be sent") {
			t.Fatalf("another visitor's key: %d %q, want 400 in the visitor's words", rec.Code, rec.Body)
		}
		if rec := alice.submit(app, app.core.Mint("alice"), "0"); rec.Code != http.StatusTeapot {
			t.Fatalf("the work's own error: %d %q, want it left to the application", rec.Code, rec.Body)
		}
	})

	// The status route written once (StatusHandler): a finished submit's
	// answer, and a key with nothing stored sent to StartOver.
	t.Run(a.Name+"/a form's status route", func(t *testing.T) {
		app := newFormApp(t, a, store, idemhttp.FormOptions{Visitor: byHeader, StartOver: "/send"})
		alice := visitor{name: "alice"}
		key := app.core.Mint("alice")
		if rec := alice.submit(app, key, "5"); rec.Code != http.StatusSeeOther {
			t.Fatalf("the submit: got %d %s, want 303", rec.Code, rec.Body)
		}
		if rec := alice.status(app, key.Key); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sent" {
			t.Fatalf("a finished key: %d %v, want its 303 to /sent", rec.Code, rec.Header())
		}
		if rec := alice.status(app, app.core.Mint("alice").Key); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/send" {
			t.Fatalf("a key with nothing stored: %d %v, want a 303 to StartOver", rec.Code, rec.Header())
		}
	})

	// A submit that finds its key held past the wait is sent to the status
	// route, by default the submit's path and "/status" (the path is
	// written once, in the route), whose page, in the Layout, polls that
	// same route; once the first submit finishes, the route redirects to
	// its answer.
	t.Run(a.Name+"/a held key's submit waits on the status route", func(t *testing.T) {
		started, finish := make(chan struct{}), make(chan struct{})
		o := idemhttp.FormOptions{Visitor: byHeader, Layout: inLayout}
		o.Wait = -1
		app := newFormApp(t, a, store, o)
		app.hold = func() { close(started); <-finish }
		alice := visitor{name: "alice"}
		key := app.core.Mint("alice")
		done := make(chan struct{})
		go func() { defer close(done); alice.submit(app, key, "5") }()
		<-started
		rec := alice.submit(app, key, "5")
		want := "/send/status?" + url.Values{"key": {key.Key}}.Encode()
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
			close(finish)
			t.Fatalf("a submit of a held key: %d %v, want a 303 to %s", rec.Code, rec.Header(), want)
		}
		page := alice.status(app, key.Key)
		body := page.Body.String()
		if page.Code != http.StatusAccepted || page.Header().Get("Refresh") == "" || page.Header().Get("Cache-Control") != "no-store" ||
			!strings.Contains(body, "<main class=layout><h1>Still working on it</h1>") || !strings.Contains(body, `href="`+html.EscapeString(want)+`"`) {
			close(finish)
			t.Fatalf("the status page of a held key: %d %v %q, want a 202 no-store in the layout that polls %s", page.Code, page.Header(), body, want)
		}
		close(finish)
		<-done
		if rec := alice.status(app, key.Key); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sent" {
			t.Fatalf("the status route once finished: %d %v, want a 303 to /sent", rec.Code, rec.Header())
		}
	})
}
