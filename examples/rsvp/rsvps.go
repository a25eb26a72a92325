package main

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v5"
)

// rsvp is a reply to the party: a name, and how many are coming with it.
type rsvp struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Guests int    `json:"guests"` // the party's size, the one who replies included
}

// valid reports whether r can be taken: a name of at most 100 bytes, and 1
// to 10 people (the table's CHECKs, said before the key is claimed).
func valid(r rsvp) bool {
	return r.Name != "" && len(r.Name) <= 100 && r.Guests >= 1 && r.Guests <= 10
}

// insertRSVP writes r in tx, the transaction that finishes the key, and
// returns it with its id.
func insertRSVP(ctx context.Context, tx pgx.Tx, r rsvp) (rsvp, error) {
	err := tx.QueryRow(ctx, `INSERT INTO rsvps (name, guests) VALUES ($1, $2) RETURNING id`, r.Name, r.Guests).Scan(&r.ID)
	return r, err
}

// findRSVP returns the RSVP the route's :id names; echo.ErrNotFound when
// there is none. The guest list is public, as a party's is.
func (s *server) findRSVP(c *echo.Context) (rsvp, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return rsvp{}, echo.ErrNotFound
	}
	r := rsvp{ID: id}
	err = s.pool.QueryRow(c.Request().Context(), `SELECT name, guests FROM rsvps WHERE id = $1`, id).Scan(&r.Name, &r.Guests)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, echo.ErrNotFound
	}
	return r, err
}

// coming is how many people are coming, all RSVPs together.
func coming(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT coalesce(sum(guests), 0) FROM rsvps`).Scan(&n)
	return n, err
}
