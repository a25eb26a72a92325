package main

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho"
)

// server holds the handlers' dependencies.
type server struct {
	pool *pgxpool.Pool
}

// newServer returns the app's routes, POST /transfers under the kit's keys.
func newServer(pool *pgxpool.Pool, keys *idem.Store) *echo.Echo {
	s := &server{pool: pool}
	e := echo.New()
	e.HideBanner = true
	e.HTTPErrorHandler = idemecho.ErrorHandler(e.DefaultHTTPErrorHandler)
	idempotent := idemecho.New(idemecho.Options{Store: keys, Scope: account})
	e.POST("/transfers", s.createTransfer, idempotent.Middleware())
	e.GET("/transfers/:id", s.getTransfer)
	return e
}

// account names who is asking, and so whose keys a request's key is among.
// It stands for your authentication: here the bearer token is the
// account's name, where a real app checks the token and names its owner.
func account(c echo.Context) (string, error) {
	token, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
	if !ok || token == "" {
		return "", echo.NewHTTPError(http.StatusUnauthorized, "send Authorization: Bearer <account>")
	}
	return token, nil
}

type transferRequest struct {
	To     string `json:"to"`
	Amount int    `json:"amount"`
}

type transfer struct {
	ID     int64  `json:"id"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int    `json:"amount"`
}

func (s *server) createTransfer(c echo.Context) error {
	var in transferRequest
	if err := c.Bind(&in); err != nil {
		return err
	}
	if in.To == "" || len(in.To) > 100 || in.Amount < 1 || in.Amount > 1000 {
		// An error before the work frees the key: the corrected request
		// may use it.
		return echo.NewHTTPError(http.StatusBadRequest, "name a recipient (to) and an amount from 1 to 1000")
	}
	from, err := account(c)
	if err != nil {
		return err
	}
	return idemecho.Do(c, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		t := transfer{From: from, To: in.To, Amount: in.Amount}
		err := tx.QueryRow(ctx, `INSERT INTO transfers (sender, recipient, amount) VALUES ($1, $2, $3) RETURNING id`,
			t.From, t.To, t.Amount).Scan(&t.ID)
		if err != nil {
			return idem.Response{}, err
		}
		return idem.Created("/transfers/"+strconv.FormatInt(t.ID, 10), t)
	})
}

func (s *server) getTransfer(c echo.Context) error {
	from, err := account(c)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.ErrNotFound
	}
	t := transfer{ID: id, From: from}
	err = s.pool.QueryRow(c.Request().Context(), `SELECT recipient, amount FROM transfers WHERE id = $1 AND sender = $2`,
		id, from).Scan(&t.To, &t.Amount)
	if errors.Is(err, pgx.ErrNoRows) {
		return echo.ErrNotFound
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}
