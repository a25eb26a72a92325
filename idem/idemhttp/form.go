package idemhttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"

	"exactlyonce/idem"
)

// Visitor names who a form's keys belong to: their scope, which their
// signature binds them to, so that a key minted for one browser is refused
// from another. It may set a cookie on w (CookieVisitor does).
type Visitor func(w http.ResponseWriter, r *http.Request) (string, error)

// CookieVisitor is a Visitor kept in a cookie of its own named name: a
// random id, set the first time the browser is seen (HttpOnly, SameSite=Lax,
// Secure over TLS, for a year). An application with sessions of its own
// names the visitor by them instead.
func CookieVisitor(name string) Visitor {
	return func(w http.ResponseWriter, r *http.Request) (string, error) {
		if c, err := r.Cookie(name); err == nil && len(c.Value) == 32 {
			if _, err := hex.DecodeString(c.Value); err == nil {
				return c.Value, nil
			}
		}
		var b [16]byte
		rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
		id := hex.EncodeToString(b[:])
		http.SetCookie(w, &http.Cookie{Name: name, Value: id, Path: "/", MaxAge: 365 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
		// The same request's Submit or Status reads it back.
		r.AddCookie(&http.Cookie{Name: name, Value: id})
		return id, nil
	}
}

// FormOptions configure a Form: the kit's options (store, secret, version,
// TTL, wait) and what HTTP adds.
type FormOptions struct {
	idem.FormOptions
	// Visitor names the visitor; default CookieVisitor("idem_visitor").
	Visitor Visitor
	// StatusPath is where the form's Status is served (GET), the route the
	// application mounts StatusHandler on: a submission still running after
	// the wait is sent there, and reloads it until its answer exists.
	// Default: the submit's path and "/status" (a form posted to "/send"
	// has its status at "/send/status"), so the path is written once, in
	// the route.
	StatusPath string
	// Layout frames the kit's pages (the "still working on it" page, a
	// refused submit) in the application's layout: title is the page's
	// title and heading, body what goes under it. The kit renders the
	// result whole, with its status, or a bare 500 if it fails. Default: a
	// bare HTML page. A templ layout taking (string, templ.Component) is
	// one through a func literal that calls it.
	Layout func(title string, body Component) Component
	// StartOver is where a visitor goes to fill the form in again: the
	// link of WriteError's pages, and where StatusHandler sends a submit
	// that left nothing stored. Default "/".
	StartOver string
}

// Form is an HTML form protected by a key minted when it is rendered: a
// double click, a reload or a resubmit after Back all send the same key,
// and its work runs once.
type Form struct {
	core *idem.Form
	o    FormOptions
}

// NewForm returns the form o describes.
func NewForm(o FormOptions) (*Form, error) {
	core, err := idem.NewForm(o.FormOptions)
	if err != nil {
		return nil, err
	}
	if o.Visitor == nil {
		o.Visitor = CookieVisitor("idem_visitor")
	}
	if o.Layout == nil {
		o.Layout = bareLayout
	}
	if o.StartOver == "" {
		o.StartOver = "/"
	}
	return &Form{core: core, o: o}, nil
}

// Core is the framework-neutral form under f.
func (f *Form) Core() *idem.Form { return f.core }

// StartOver is where f sends a visitor to fill the form in again:
// FormOptions.StartOver, or its default. An adapter's status route reads it
// here, so that the default is set in one place.
func (f *Form) StartOver() string { return f.o.StartOver }

// Key mints the key to render into the form (HiddenFields) for this
// request's visitor.
func (f *Form) Key(w http.ResponseWriter, r *http.Request) (idem.FormKey, error) {
	v, err := f.o.Visitor(w, r)
	if err != nil {
		return idem.FormKey{}, err
	}
	return f.core.Mint(v), nil
}

// Submit runs work at most once for the key the submitted form carries.
// fields are what the visitor submitted that the answer depends on, in a
// fixed order (the same key with other fields is refused, 422). work writes
// in its transaction and answers, usually with idem.Redirect to the
// result; every submission of the key gets that answer. A submission that
// finds the key still held after the wait is sent to the status page. The
// kit's refusals (a foreign, stale or missing key: idem.ErrFormKey…; a key
// reused: idem.ErrMismatch) and work's own errors are returned for the
// application's error handler; nothing has been written then.
func (f *Form) Submit(w http.ResponseWriter, r *http.Request, fields []string, work idem.Work) error {
	v, err := f.o.Visitor(w, r)
	if err != nil {
		return err
	}
	o, err := f.core.Submit(r.Context(), v, FormKeyOf(r), fields, work)
	if errors.Is(err, idem.ErrInProgress) {
		http.Redirect(w, r, statusURL(f.statusPath(r), FormKeyOf(r).Key), http.StatusSeeOther)
		return nil
	}
	if err != nil {
		return err
	}
	Write(w, o)
	return nil
}

// statusPath is where the submit r is sent while its key is held.
func (f *Form) statusPath(r *http.Request) string {
	if f.o.StatusPath != "" {
		return f.o.StatusPath
	}
	return path.Join(r.URL.Path, "status")
}

func statusURL(path, key string) string {
	return path + "?" + url.Values{"key": {key}}.Encode()
}

// Status serves StatusPath: the stored answer (a redirect to the result)
// once the key is finished; while it runs, the processing page with a
// Refresh header, so the browser asks again every second without a script.
// idem.ErrNotFound means nothing was stored under the key (its submission
// was refused, and nothing written): answer it with the form again.
func (f *Form) Status(w http.ResponseWriter, r *http.Request) error {
	v, err := f.o.Visitor(w, r)
	if err != nil {
		return err
	}
	key := r.URL.Query().Get("key")
	resp, err := f.core.Status(r.Context(), v, key)
	if errors.Is(err, idem.ErrInProgress) {
		w.Header().Set("Refresh", "1")
		f.page(w, r, http.StatusAccepted, processingTitle, Processing(statusURL(r.URL.Path, key)))
		return nil
	}
	if err != nil {
		return err
	}
	Write(w, idem.Outcome{Response: resp, Replayed: true})
	return nil
}

// StatusHandler serves StatusPath whole, for the route the application
// mounts there: Status, a submit that left nothing stored
// (idem.ErrNotFound) sent to StartOver to fill the form in again, the
// kit's refusals written by WriteError, and any other error (the Visitor's,
// an outage's) logged with slog's default logger and answered 500 in the
// Layout.
func (f *Form) StatusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := f.Status(w, r)
		switch {
		case err == nil:
		case errors.Is(err, idem.ErrNotFound):
			http.Redirect(w, r, f.o.StartOver, http.StatusSeeOther)
		case f.WriteError(w, r, err):
		default:
			slog.ErrorContext(r.Context(), "idem: form status failed", "path", r.URL.Path, "err", err)
			title, text := visitorWords(err, idem.Refusal{})
			f.page(w, r, http.StatusInternalServerError, title, refused(text, f.o.StartOver))
		}
	})
}

// FormKeyOf reads the key fields (HiddenFields) of a submitted form.
func FormKeyOf(r *http.Request) idem.FormKey {
	return idem.FormKey{Key: r.FormValue(idem.KeyField), Sig: r.FormValue(idem.SigField)}
}

// page writes body in the Layout under title, whole, with status. A page
// that fails to render is a bare 500, logged: half a page cannot be taken
// back.
func (f *Form) page(w http.ResponseWriter, r *http.Request, status int, title string, body Component) {
	var b bytes.Buffer
	if err := f.o.Layout(title, body).Render(r.Context(), &b); err != nil {
		slog.ErrorContext(r.Context(), "idem: render the form's page", "path", r.URL.Path, "err", err)
		http.Error(w, "Something went wrong; please try again.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if w.Header().Get("Cache-Control") == "" {
		// A "still working" page or a refusal is of this moment: a Back
		// to it asks again.
		w.Header().Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	b.WriteTo(w) //nolint:errcheck // the client went away
}

// bareLayout is the default Layout: a minimal HTML page.
func bareLayout(title string, body Component) Component {
	return componentFunc(func(ctx context.Context, w io.Writer) error {
		t := html.EscapeString(title)
		if _, err := io.WriteString(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"+t+"</title></head><body><h1>"+t+"</h1>"); err != nil {
			return err
		}
		if err := body.Render(ctx, w); err != nil {
			return err
		}
		_, err := io.WriteString(w, "</body></html>\n")
		return err
	})
}
