package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
)

// server holds the handlers' dependencies.
type server struct {
	pool    *pgxpool.Pool
	visitor idemhttp.Visitor // who sends: a cookie of their own
	form    *idemhttp.Form   // the send form's keys
}

// newServer builds the handlers and the form they protect, whose keys are
// kept in keys and signed with secret.
func newServer(pool *pgxpool.Pool, keys *idem.Store, secret []byte) (*server, error) {
	s := &server{pool: pool, visitor: idemhttp.CookieVisitor("visitor")}
	form, err := idemhttp.NewForm(idemhttp.FormOptions{
		FormOptions: idem.FormOptions{Store: keys, Secret: secret},
		Visitor:     s.visitor,
		StatusPath:  "/send/status",
		Page: func(w http.ResponseWriter, r *http.Request, status int, body idemhttp.Component) error {
			return render(w, r, status, page("Sending…", body))
		},
	})
	if err != nil {
		return nil, fmt.Errorf("send form (FORM_SECRET): %w", err)
	}
	s.form = form
	return s, nil
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", handle(s.showForm))
	mux.Handle("POST /send", handle(s.send))
	mux.Handle("GET /send/status", s.form.StatusHandler())
	mux.Handle("GET /sent/{id}", handle(s.receipt))
	return mux
}

func (s *server) showForm(w http.ResponseWriter, r *http.Request) error {
	return s.renderForm(w, r, http.StatusOK, sendForm{})
}

// renderForm shows the form with a key minted for it: every submit of this
// copy of the form sends that key.
func (s *server) renderForm(w http.ResponseWriter, r *http.Request, status int, f sendForm) error {
	key, err := s.form.Key(w, r)
	if err != nil {
		return err
	}
	f.Key = key
	return render(w, r, status, page("Send money to a friend", sendView(f)))
}

func (s *server) send(w http.ResponseWriter, r *http.Request) error {
	friend, amount := strings.TrimSpace(r.PostFormValue("friend")), r.PostFormValue("amount")
	euros, err := strconv.Atoi(amount)
	if friend == "" || len(friend) > 100 || err != nil || euros < 1 || euros > 1000 {
		// Refused before the key is claimed: nothing is stored.
		return s.renderForm(w, r, http.StatusBadRequest, sendForm{Friend: friend, Amount: amount,
			Problem: "Name a friend, and an amount from 1 to 1000 euros."})
	}
	err = s.form.Submit(w, r, []string{friend, strconv.Itoa(euros)}, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO transfers (sender, friend, amount) VALUES ($1, $2, $3) RETURNING id`,
			idem.LockOf(ctx).Scope, friend, euros).Scan(&id) // the lock's scope is the visitor
		return idem.Redirect("/sent/" + strconv.FormatInt(id, 10)), err
	})
	if err != nil && s.form.WriteError(w, r, err) {
		return nil // the kit's refusal, in the visitor's words
	}
	return err
}

func (s *server) receipt(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.NotFound(w, r)
		return nil
	}
	sender, err := s.visitor(w, r)
	if err != nil {
		return err
	}
	t := transfer{ID: id}
	err = s.pool.QueryRow(r.Context(), `SELECT friend, amount FROM transfers WHERE id = $1 AND sender = $2`,
		id, sender).Scan(&t.Friend, &t.Amount)
	if errors.Is(err, pgx.ErrNoRows) {
		http.NotFound(w, r)
		return nil
	}
	if err != nil {
		return err
	}
	return render(w, r, http.StatusOK, page("Sent", sentView(t)))
}

// handle turns a handler that returns its error into an http.Handler.
func handle(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			fail(w, r, err)
		}
	})
}

// fail answers an error: the kit's refusals (a form sent again with other
// values, an expired or foreign form, the database out of reach) with their
// status and what to do; anything else with a 500 that says nothing of it.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	ref, ok := idem.RefusalOf(err)
	if !ok {
		slog.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "err", err)
		ref = idem.Refusal{Status: http.StatusInternalServerError, Slug: "internal", Title: "Something went wrong",
			Detail: "Something went wrong on our side; please try again."}
	}
	render(w, r, ref.Status, page(ref.Title, refusalView(ref))) //nolint:errcheck // there is nothing else to show
}

// render writes c whole with status, or nothing if it fails to render.
func render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	var b bytes.Buffer
	if err := c.Render(r.Context(), &b); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := b.WriteTo(w)
	return err
}
