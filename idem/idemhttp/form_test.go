package idemhttp_test

import (
	"context"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/idem/idemtest"
)

const testSecret = "a form secret of at least thirty-two bytes"

// visitorHeader names the visitor in these tests, so that a test can be two
// visitors at once.
func visitorHeader(_ http.ResponseWriter, r *http.Request) (string, error) {
	return r.Header.Get("X-Visitor"), nil
}

func newForm(t *testing.T, o idemhttp.FormOptions) *idemhttp.Form {
	t.Helper()
	o.Store, o.Secret = idem.NewStore(idemtest.NewPool(t), idem.Options{}), []byte(testSecret)
	if o.Visitor == nil {
		o.Visitor = visitorHeader
	}
	f, err := idemhttp.NewForm(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// submitAs posts the form as visitor with key and the field amount.
func submitAs(t *testing.T, h http.HandlerFunc, visitor string, key idem.FormKey, amount string) *httptest.ResponseRecorder {
	t.Helper()
	body := url.Values{idem.KeyField: {key.Key}, idem.SigField: {key.Sig}, "amount": {amount}}.Encode()
	req := httptest.NewRequest(http.MethodPost, "/send", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Visitor", visitor)
	rec := httptest.NewRecorder()
	h(rec, req)
	return rec
}

// The visitor the form computed is handed to the work, in its lock: an
// application does not compute it twice.
func TestFormWorkGetsTheVisitor(t *testing.T) {
	form := newForm(t, idemhttp.FormOptions{})
	var got *idem.Lock
	h := func(w http.ResponseWriter, r *http.Request) {
		err := form.Submit(w, r, []string{r.PostFormValue("amount")}, func(ctx context.Context, _ pgx.Tx) (idem.Response, error) {
			got = idem.LockOf(ctx)
			return idem.Redirect("/sent"), nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	rec := submitAs(t, h, "alice", form.Core().Mint("alice"), "5")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303", rec.Code)
	}
	if got == nil || got.Scope != "alice" {
		t.Fatalf("the work's lock %+v, want one whose Scope is the visitor alice", got)
	}
}

// layout is an application's layout: the title in its own heading.
func layout(title string, body idemhttp.Component) idemhttp.Component {
	return componentFunc(func(ctx context.Context, w io.Writer) error {
		if _, err := io.WriteString(w, "<main class=layout><h1>"+html.EscapeString(title)+"</h1>"); err != nil {
			return err
		}
		return body.Render(ctx, w)
	})
}

type componentFunc func(ctx context.Context, w io.Writer) error

func (f componentFunc) Render(ctx context.Context, w io.Writer) error { return f(ctx, w) }

// The kit's refusals of a submit are rendered in the form's layout, titled
// and worded for the visitor; the application's own errors are left to it.
func TestFormWriteError(t *testing.T) {
	form := newForm(t, idemhttp.FormOptions{StartOver: "/send", Layout: layout})
	h := func(w http.ResponseWriter, r *http.Request) {
		err := form.Submit(w, r, []string{r.PostFormValue("amount")}, func(context.Context, pgx.Tx) (idem.Response, error) {
			if r.PostFormValue("amount") == "0" {
				return idem.Response{}, errOwn
			}
			return idem.Redirect("/sent"), nil
		})
		if err != nil && !form.WriteError(w, r, err) {
			if !errors.Is(err, errOwn) {
				t.Errorf("WriteError declined %v", err)
			}
			w.WriteHeader(http.StatusTeapot)
		}
	}
	key := form.Core().Mint("alice")
	if rec := submitAs(t, h, "alice", key, "5"); rec.Code != http.StatusSeeOther {
		t.Fatalf("first submit: %d", rec.Code)
	}
	rec := submitAs(t, h, "alice", key, "6")
	body := rec.Body.String()
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "<main class=layout><h1>This form was already sent</h1>") ||
		!strings.Contains(body, "already sent with other values") || !strings.Contains(body, `href="/send"`) ||
		rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("the same key with other values: %d %q, want 422 in the layout, in the visitor's words, with a way back", rec.Code, body)
	}
	if strings.Contains(strings.ToLower(body), "idempotency") {
		t.Fatalf("the visitor is told %q", body)
	}
	rec = submitAs(t, h, "bob", key, "5")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "cannot be sent") {
		t.Fatalf("another visitor's key: %d %q", rec.Code, rec.Body)
	}
	if rec := submitAs(t, h, "alice", form.Core().Mint("alice"), "0"); rec.Code != http.StatusTeapot {
		t.Fatalf("the work's own error: %d %q, want it left to the application", rec.Code, rec.Body)
	}
}

var errOwn = errors.New("the application's own error")

// The status route written once: a finished submit's answer, and a key
// with nothing stored sent to StartOver.
func TestFormStatusHandler(t *testing.T) {
	form := newForm(t, idemhttp.FormOptions{StartOver: "/send"})
	h := func(w http.ResponseWriter, r *http.Request) {
		if err := form.Submit(w, r, []string{"5"}, func(context.Context, pgx.Tx) (idem.Response, error) {
			return idem.Redirect("/sent/1"), nil
		}); err != nil {
			t.Error(err)
		}
	}
	key := form.Core().Mint("alice")
	submitAs(t, h, "alice", key, "5")
	status := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/send/status?"+url.Values{"key": {key}}.Encode(), nil)
		req.Header.Set("X-Visitor", "alice")
		rec := httptest.NewRecorder()
		form.StatusHandler().ServeHTTP(rec, req)
		return rec
	}
	if rec := status(key.Key); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sent/1" {
		t.Fatalf("a finished key: %d %v, want its 303 to /sent/1", rec.Code, rec.Header())
	}
	if rec := status(form.Core().Mint("alice").Key); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/send" {
		t.Fatalf("a key with nothing stored: %d %v, want a 303 to StartOver", rec.Code, rec.Header())
	}
}

// A submit that finds its key held past the wait is sent to the status
// route, by default the submit's path and "/status" (StatusPath written
// once, in the route), whose page, in the layout, polls that same route;
// once the first submit finishes, the route redirects to its answer.
func TestFormStatusPathDefault(t *testing.T) {
	form := newForm(t, idemhttp.FormOptions{Layout: layout, FormOptions: idem.FormOptions{Wait: -1}})
	started, finish := make(chan struct{}), make(chan struct{})
	h := func(w http.ResponseWriter, r *http.Request) {
		if err := form.Submit(w, r, []string{"5"}, func(context.Context, pgx.Tx) (idem.Response, error) {
			close(started)
			<-finish
			return idem.Redirect("/sent/1"), nil
		}); err != nil {
			t.Error(err)
		}
	}
	key := form.Core().Mint("alice")
	done := make(chan struct{})
	go func() { defer close(done); submitAs(t, h, "alice", key, "5") }()
	<-started
	rec := submitAs(t, h, "alice", key, "5")
	want := "/send/status?" + url.Values{"key": {key.Key}}.Encode()
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
		t.Fatalf("a submit of a held key: %d %v, want a 303 to %s", rec.Code, rec.Header(), want)
	}
	status := httptest.NewRequest(http.MethodGet, want, nil)
	status.Header.Set("X-Visitor", "alice")
	page := httptest.NewRecorder()
	form.StatusHandler().ServeHTTP(page, status)
	if page.Code != http.StatusAccepted || page.Header().Get("Refresh") == "" ||
		!strings.Contains(page.Body.String(), "<main class=layout><h1>Still working on it</h1>") ||
		!strings.Contains(page.Body.String(), `href="`+html.EscapeString(want)+`"`) {
		t.Fatalf("the status page of a held key: %d %v %q, want a 202 in the layout that polls %s", page.Code, page.Header(), page.Body, want)
	}
	close(finish)
	<-done
	page = httptest.NewRecorder()
	form.StatusHandler().ServeHTTP(page, status)
	if page.Code != http.StatusSeeOther || page.Header().Get("Location") != "/sent/1" {
		t.Fatalf("the status route once finished: %d %v, want a 303 to /sent/1", page.Code, page.Header())
	}
}
