package fakestripe

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"
)

// listIntents serves GET /v1/payment_intents as Stripe pages a list: newest
// first, limit (1 to 100, default 10), starting_after (the page after an
// id: older intents) or ending_before (the page before it: newer ones),
// created[gte|gt|lte|lt] or created=<t>, and has_more.
func (p *Provider) listIntents(c echo.Context) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	ps, err := checkParams(form, "limit", "starting_after", "ending_before", "created", "created[", "expand[")
	if err != nil {
		return err
	}
	limit, ok, err := ps.int("limit")
	switch {
	case err != nil:
		return err
	case !ok:
		limit = 10
	case limit < 1 || limit > 100:
		return invalidRequest("parameter_invalid_integer", "limit", "This value must be between 1 and 100.")
	}
	where, args := "true", []any{}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if t, ok, err := ps.int("created"); err != nil {
		return err
	} else if ok {
		where += " AND i.created = " + arg(t)
	}
	for op, sql := range map[string]string{"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"} {
		if t, ok, err := ps.int("created[" + op + "]"); err != nil {
			return err
		} else if ok {
			where += " AND i.created " + sql + " " + arg(t)
		}
	}
	order, before := "DESC", false
	ctx := c.Request().Context()
	for _, cursor := range []struct{ param, cmp string }{{"starting_after", "<"}, {"ending_before", ">"}} {
		id := ps.str(cursor.param)
		if id == "" {
			continue
		}
		at, err := p.Intent(ctx, id)
		if errors.Is(err, errNotFound) {
			return missing(cursor.param, "payment_intent", id)
		}
		if err != nil {
			return err
		}
		where += " AND i.seq " + cursor.cmp + " " + arg(at.Seq)
		if cursor.param == "ending_before" {
			order, before = "ASC", true
		}
	}
	rows, err := p.pool.Query(ctx, `SELECT `+intentColumns+` FROM fakestripe.payment_intents i WHERE `+where+
		` ORDER BY i.seq `+order+` LIMIT `+arg(limit+1), args...)
	if err != nil {
		return fmt.Errorf("list intents: %w", err)
	}
	defer rows.Close()
	var page []Intent
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return fmt.Errorf("list intents: %w", err)
		}
		page = append(page, in)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list intents: %w", err)
	}
	hasMore := len(page) > int(limit)
	page = page[:min(len(page), int(limit))]
	if before {
		slices.Reverse(page) // a page is always newest first
	}
	data := make([]json.RawMessage, len(page))
	for i, in := range page {
		data[i] = in.JSON()
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": hasMore, "url": "/v1/payment_intents"})
}
