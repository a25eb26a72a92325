package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
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
	"exactlyonce/idem/idemjs"
)

// sendPage is the form sent with fetch, through the kit's idem.js, to the
// JSON route: a page with no build step.
//
//go:embed send.html
var sendPage []byte

// server holds the handlers' dependencies.
type server struct {
	pool    *pgxpool.Pool
	visitor idemhttp.Visitor // who sends from the form: a cookie of their own
	form    *idemhttp.Form   // the send form's keys
	api     *idemhttp.Keys   // the JSON route's keys, under Idempotency-Key
}

// newServer builds the handlers and the form they protect, whose keys are
// kept in keys and signed with secret.
func newServer(pool *pgxpool.Pool, keys *idem.Store, secret []byte) (*server, error) {
	visitor := idemhttp.CookieVisitor("visitor")
	form, err := idemhttp.NewForm(idemhttp.FormOptions{
		FormOptions: idem.FormOptions{Store: keys, Secret: secret},
		Visitor:     visitor,
		Layout:      func(title string, body idemhttp.Component) idemhttp.Component { return page(title, body) },
	})
	if err != nil {
		return nil, fmt.Errorf("send form (FORM_SECRET): %w", err)
	}
	return &server{pool: pool, visitor: visitor, form: form,
		api: idemhttp.New(idemhttp.Options{Store: keys, Scope: account})}, nil
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", s.handle(s.showForm))
	mux.Handle("POST /send", s.handle(s.send))
	mux.Handle("GET /send/status", s.form.StatusHandler())
	mux.Handle("GET /sent/{id}", s.handle(s.receipt))
	mux.Handle("POST /api/transfers", s.api.Func(s.sendJSON))
	mux.Handle("GET /api/transfers/{id}", http.HandlerFunc(s.getJSON))
	mux.Handle("GET /idem/", http.StripPrefix("/idem/", idemjs.Handler()))
	mux.HandleFunc("GET /fetch", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(sendPage) // a browser gone away is told nothing
	})
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
	if problem := check(friend, euros, err); problem != "" {
		// Refused before the key is claimed: nothing is stored.
		return s.renderForm(w, r, http.StatusBadRequest, sendForm{Friend: friend, Amount: amount, Problem: problem})
	}
	return s.form.Submit(w, r, []string{friend, strconv.Itoa(euros)}, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		t, err := insert(ctx, tx, transfer{Sender: idem.LockOf(ctx).Scope, Friend: friend, Amount: euros})
		return idem.Redirect("/sent/" + strconv.FormatInt(t.ID, 10)), err
	})
}

// check says what is wrong with a transfer, or "".
func check(friend string, euros int, err error) string {
	if friend == "" || len(friend) > 100 || err != nil || euros < 1 || euros > 1000 {
		return "Name a friend, and an amount from 1 to 1000 euros."
	}
	return ""
}

// insert writes t, in the transaction that finishes its key.
func insert(ctx context.Context, tx pgx.Tx, t transfer) (transfer, error) {
	err := tx.QueryRow(ctx, `INSERT INTO transfers (sender, friend, amount) VALUES ($1, $2, $3) RETURNING id`,
		t.Sender, t.Friend, t.Amount).Scan(&t.ID)
	return t, err
}

// sendJSON is the form's JSON twin, POST /api/transfers {"friend": "Ada",
// "amount": 20} under an Idempotency-Key: 201 with the transfer, replayed
// to every retry of the key; the same key with another body is refused
// (422), and a request refused here, before Do, frees its key for the
// corrected one.
func (s *server) sendJSON(w http.ResponseWriter, r *http.Request) error {
	var in transfer
	err := json.NewDecoder(r.Body).Decode(&in)
	if problem := check(strings.TrimSpace(in.Friend), in.Amount, err); problem != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": problem})
		return nil
	}
	return idemhttp.Do(w, r, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		t, err := insert(ctx, tx, transfer{Sender: idem.LockOf(ctx).Scope, Friend: strings.TrimSpace(in.Friend), Amount: in.Amount})
		if err != nil {
			return idem.Response{}, err
		}
		return idem.Created("/api/transfers/"+strconv.FormatInt(t.ID, 10), t)
	})
}

func (s *server) receipt(w http.ResponseWriter, r *http.Request) error {
	sender, err := s.visitor(w, r)
	if err != nil {
		return err
	}
	t, err := s.lookup(r, sender)
	if errors.Is(err, pgx.ErrNoRows) {
		http.NotFound(w, r)
		return nil
	}
	if err != nil {
		return err
	}
	return render(w, r, http.StatusOK, page("Sent", sentView(t)))
}

// getJSON is where POST /api/transfers's Location points: the transfer, to
// the account that sent it.
func (s *server) getJSON(w http.ResponseWriter, r *http.Request) {
	sender, err := account(r)
	if err != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "send Authorization: Bearer <account>"})
		return
	}
	t, err := s.lookup(r, sender)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such transfer"})
	case err != nil:
		slog.ErrorContext(r.Context(), "get transfer", "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "something went wrong"})
	default:
		writeJSON(w, http.StatusOK, t)
	}
}

// lookup reads the transfer the path's {id} names, if sender sent it.
func (s *server) lookup(r *http.Request, sender string) (transfer, error) {
	t := transfer{Sender: sender}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return t, pgx.ErrNoRows
	}
	t.ID = id
	err = s.pool.QueryRow(r.Context(), `SELECT friend, amount FROM transfers WHERE id = $1 AND sender = $2`,
		id, sender).Scan(&t.Friend, &t.Amount)
	return t, err
}

// account names who calls the JSON route, and so whose keys a request's
// key is among. It stands for your authentication: here the bearer token
// is the account's name, where a real app checks the token and names its
// owner.
func account(r *http.Request) (string, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" || len(token) > 100 {
		return "", &idem.ScopeError{Detail: "send Authorization: Bearer <account>"} // 401
	}
	return "api:" + token, nil // apart from the form's visitors
}

// handle turns a handler that returns its error into an http.Handler.
func (s *server) handle(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.fail(w, r, err)
		}
	})
}

// fail answers an error: the kit's refusals (a form sent again with other
// values, an expired or foreign form, the database out of reach) through
// the form's page in the visitor's words; anything else with a 500 that
// says nothing of it.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if s.form.WriteError(w, r, err) {
		return
	}
	slog.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "err", err)
	render(w, r, http.StatusInternalServerError, page("Something went wrong", oops())) //nolint:errcheck // there is nothing else to show
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
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
