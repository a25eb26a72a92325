package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho5"
)

// server holds the handlers' dependencies.
type server struct {
	pool *pgxpool.Pool
	form *idemecho5.Form // the RSVP form's keys
}

// newServer returns the app's routes: the RSVP form, whose keys are signed
// with secret, and POST /api/rsvps under the Idempotency-Key header; both
// keep their keys in keys.
func newServer(pool *pgxpool.Pool, keys *idem.Store, secret []byte) (*echo.Echo, error) {
	form, err := idemecho5.NewForm(idemecho5.FormOptions{
		FormOptions: idem.FormOptions{Store: keys, Secret: secret},
		Layout:      func(title string, body idemecho5.Component) idemecho5.Component { return page(title, body) },
	})
	if err != nil {
		return nil, fmt.Errorf("rsvp form (FORM_SECRET): %w", err)
	}
	s := &server{pool: pool, form: form}
	api := idemecho5.New(idemecho5.Options{Store: keys, Scope: account})

	e := echo.New()
	e.HTTPErrorHandler = idemecho5.ErrorHandler(logged(echo.DefaultHTTPErrorHandler(false)))
	e.GET("/", s.showForm)
	e.POST("/rsvp", s.reply)
	e.GET("/rsvp/status", s.form.StatusHandler())
	e.GET("/rsvps/:id", s.showRSVP)
	e.POST("/api/rsvps", s.createRSVP, api.Middleware())
	e.GET("/api/rsvps/:id", s.getRSVP)
	return e, nil
}

// The browser's side: the form, its submit, and the RSVP it leads to.

func (s *server) showForm(c *echo.Context) error {
	return s.renderForm(c, http.StatusOK, rsvpForm{})
}

// renderForm shows the form with a key minted for it: every submit of this
// copy of the form sends that key.
func (s *server) renderForm(c *echo.Context, status int, f rsvpForm) error {
	key, err := s.form.Key(c)
	if err != nil {
		return err
	}
	f.Key = key
	if f.Coming, err = coming(c.Request().Context(), s.pool); err != nil {
		return err
	}
	return render(c, status, page("Launch party", formView(f)))
}

func (s *server) reply(c *echo.Context) error {
	in := rsvp{Name: strings.TrimSpace(c.FormValue("name"))}
	guests := c.FormValue("guests")
	in.Guests, _ = strconv.Atoi(guests) // not a number: 0, refused below
	if !valid(in) {
		// Refused before the key is claimed: nothing is stored, and the
		// corrected form may be sent with the same key.
		return s.renderForm(c, http.StatusBadRequest, rsvpForm{Name: in.Name, Guests: guests,
			Problem: "Give your name, and how many of you are coming: 1 to 10."})
	}
	err := s.form.Submit(c, []string{in.Name, strconv.Itoa(in.Guests)}, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		r, err := insertRSVP(ctx, tx, in)
		return idem.Redirect("/rsvps/" + strconv.FormatInt(r.ID, 10)), err
	})
	if err != nil && s.form.WriteError(c, err) {
		return nil // the kit's refusal, in the visitor's words
	}
	return err
}

func (s *server) showRSVP(c *echo.Context) error {
	r, err := s.findRSVP(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, page("See you there", rsvpView(r)))
}

// The API's side: the same RSVP as JSON.

// account names who is asking, and so whose keys a request's key is among.
// It stands for your authentication: here the bearer token is the
// account's name, where a real app checks the token and names its owner.
func account(c *echo.Context) (string, error) {
	token, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
	if !ok || token == "" {
		return "", echo.NewHTTPError(http.StatusUnauthorized, "send Authorization: Bearer <account>")
	}
	return token, nil
}

func (s *server) createRSVP(c *echo.Context) error {
	var in rsvp
	if err := c.Bind(&in); err != nil {
		return err
	}
	in.Name = strings.TrimSpace(in.Name)
	if !valid(in) {
		// An error before the work frees the key: the corrected request
		// may use it.
		return echo.NewHTTPError(http.StatusBadRequest, "give a name, and how many are coming (guests): 1 to 10")
	}
	return idemecho5.Do(c, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		r, err := insertRSVP(ctx, tx, in)
		if err != nil {
			return idem.Response{}, err
		}
		return idem.Created("/api/rsvps/"+strconv.FormatInt(r.ID, 10), r)
	})
}

func (s *server) getRSVP(c *echo.Context) error {
	r, err := s.findRSVP(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// Both sides' answers.

// render writes view whole with status, or nothing if it fails to render.
func render(c *echo.Context, status int, view templ.Component) error {
	var b bytes.Buffer
	if err := view.Render(c.Request().Context(), &b); err != nil {
		return err
	}
	return c.HTMLBlob(status, b.Bytes())
}

// logged logs an error whose cause the client is not told (a 500's), then
// has next answer it: Echo's handler logs nothing.
func logged(next echo.HTTPErrorHandler) echo.HTTPErrorHandler {
	return func(c *echo.Context, err error) {
		if status := echo.StatusCode(err); status == 0 || status >= http.StatusInternalServerError {
			slog.ErrorContext(c.Request().Context(), "request failed", "path", c.Request().URL.Path, "err", err)
		}
		next(c, err)
	}
}
