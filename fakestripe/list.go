package fakestripe

import (
	"encoding/json"
	"errors"
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
	limit, err := ps.limit()
	if err != nil {
		return err
	}
	q := listQuery{newestFirst: true, limit: int(limit) + 1}
	if t, ok, err := ps.int("created"); err != nil {
		return err
	} else if ok {
		q.created = append(q.created, createdBound{"=", t})
	}
	for op, cmp := range map[string]string{"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"} {
		if t, ok, err := ps.int("created[" + op + "]"); err != nil {
			return err
		} else if ok {
			q.created = append(q.created, createdBound{cmp, t})
		}
	}
	before := false
	ctx := c.Request().Context()
	for _, param := range []string{"starting_after", "ending_before"} {
		id := ps.str(param)
		if id == "" {
			continue
		}
		at, err := p.Intent(ctx, id)
		if errors.Is(err, errNotFound) {
			return missing(param, "payment_intent", id)
		}
		if err != nil {
			return err
		}
		if param == "starting_after" {
			q.seqBelow = at.Seq
		} else {
			q.seqAbove, q.newestFirst, before = at.Seq, false, true
		}
	}
	page, err := p.store.list(ctx, q)
	if err != nil {
		return err
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

// limit is a list's limit: 1 to 100, 10 when absent.
func (p params) limit() (int64, error) {
	limit, ok, err := p.int("limit")
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 10, nil
	case limit < 1 || limit > 100:
		return 0, invalidRequest("parameter_invalid_integer", "limit", "This value must be between 1 and 100.")
	}
	return limit, nil
}

// listRefunds serves GET /v1/refunds as Stripe pages it: newest first, the
// refunds of one payment_intent (or of its charge) or all of them, limit,
// starting_after, ending_before and has_more.
func (p *Provider) listRefunds(c echo.Context) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	ps, err := checkParams(form, "payment_intent", "charge", "limit", "starting_after", "ending_before", "expand[")
	if err != nil {
		return err
	}
	limit, err := ps.limit()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	q := refundQuery{intentID: ps.str("payment_intent"), newestFirst: true, limit: int(limit) + 1}
	if charge := ps.str("charge"); charge != "" {
		err := p.store.inTx(ctx, func(tx storeTx) error {
			id, err := tx.intentOfCharge(ctx, charge)
			if err == nil && q.intentID != "" && q.intentID != id {
				err = errNotFound // a charge of another intent: none are both
			}
			q.intentID = id
			return err
		})
		if errors.Is(err, errNotFound) {
			return missing("charge", "charge", charge)
		}
		if err != nil {
			return err
		}
	}
	before := false
	for _, param := range []string{"starting_after", "ending_before"} {
		id := ps.str(param)
		if id == "" {
			continue
		}
		at, err := p.store.refund(ctx, id)
		if errors.Is(err, errNotFound) {
			return missing(param, "refund", id)
		}
		if err != nil {
			return err
		}
		if param == "starting_after" {
			q.seqBelow = at.Seq
		} else {
			q.seqAbove, q.newestFirst, before = at.Seq, false, true
		}
	}
	page, err := p.store.refunds(ctx, q)
	if err != nil {
		return err
	}
	hasMore := len(page) > int(limit)
	page = page[:min(len(page), int(limit))]
	if before {
		slices.Reverse(page) // a page is always newest first
	}
	data := make([]json.RawMessage, len(page))
	for i, r := range page {
		data[i] = r.JSON()
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": hasMore, "url": "/v1/refunds"})
}
