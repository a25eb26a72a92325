package fakestripe

import (
	"context"
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
	ctx := c.Request().Context()
	pg, err := ps.page(ctx, "payment_intent", func(ctx context.Context, id string) (int64, error) {
		in, err := p.Intent(ctx, id)
		return in.Seq, err
	})
	if err != nil {
		return err
	}
	q := listQuery{window: pg.window}
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
	rows, err := p.store.list(ctx, q)
	if err != nil {
		return err
	}
	return writePage(c, pg, rows, "/v1/payment_intents")
}

// page is a list page asked for: the window to read (one row more than
// asked, to tell whether there are more) and whether it pages backwards.
type page struct {
	window
	size   int
	before bool
}

// page reads a list's paging parameters as Stripe takes them, for intents
// and refunds alike: limit (1 to 100, default 10), starting_after (the page
// after an object: older ones) or ending_before (the page before it: newer
// ones). seqOf finds the Seq of the object a cursor names, or errNotFound;
// kind is that object's name in the error when there is none.
func (ps params) page(ctx context.Context, kind string, seqOf func(context.Context, string) (int64, error)) (page, error) {
	limit, err := ps.limit()
	if err != nil {
		return page{}, err
	}
	pg := page{window: window{newestFirst: true, limit: int(limit) + 1}, size: int(limit)}
	for _, param := range []string{"starting_after", "ending_before"} {
		id := ps.str(param)
		if id == "" {
			continue
		}
		seq, err := seqOf(ctx, id)
		if errors.Is(err, errNotFound) {
			return page{}, missing(param, kind, id)
		}
		if err != nil {
			return page{}, err
		}
		if param == "starting_after" {
			pg.seqBelow = seq
		} else {
			pg.seqAbove, pg.newestFirst, pg.before = seq, false, true
		}
	}
	return pg, nil
}

// writePage answers rows, read with pg's window, as Stripe's list object:
// at most pg.size of them, newest first, has_more when there was one more.
func writePage[T interface{ JSON() json.RawMessage }](c echo.Context, pg page, rows []T, url string) error {
	hasMore := len(rows) > pg.size
	rows = rows[:min(len(rows), pg.size)]
	if pg.before {
		slices.Reverse(rows) // a page is always newest first
	}
	data := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		data[i] = r.JSON()
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": hasMore, "url": url})
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
	ctx := c.Request().Context()
	pg, err := ps.page(ctx, "refund", func(ctx context.Context, id string) (int64, error) {
		r, err := p.store.refund(ctx, id)
		return r.Seq, err
	})
	if err != nil {
		return err
	}
	q := refundQuery{intentID: ps.str("payment_intent"), window: pg.window}
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
	rows, err := p.store.refunds(ctx, q)
	if err != nil {
		return err
	}
	return writePage(c, pg, rows, "/v1/refunds")
}
