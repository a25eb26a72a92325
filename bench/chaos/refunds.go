package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/bench/chaos/history"
	"exactlyonce/client"
	"exactlyonce/idem"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
)

// The rest of an order's life in a run (issue 40): a share of the placed
// orders (Config.Refunds) is cancelled by its customer through the API, or
// refunded in part by an operator on the shops' admin listeners, or both at
// once, each under its own idempotency key and retried with it through the
// chaos; and one product keeps a little stock (Config.LastItems) that
// clients order at once, so that some are told sold-out and cancels give
// stock back. What the clients were told goes into the history (a register
// per refund key, package history); the books are checked at the end
// (refund_check.go).

// RefundClients counts what the refund clients did and were told.
type RefundClients struct {
	// Orders are the placed orders picked for a refund; of them, Cancels
	// were cancelled by their customer alone (Doubled of those sent twice
	// at once under one key; Second followed by a cancel under a second
	// key), Partial refunded in part by one operator (Forms doubled: the
	// same form sent twice at once; Then the customer cancelled the rest),
	// TwoOperators by two operators at once, Races by an operator while
	// the customer cancelled.
	Orders       int `json:"orders"`
	Cancels      int `json:"cancels"`
	Doubled      int `json:"cancels_doubled"`
	Second       int `json:"second_cancels"`
	Partial      int `json:"partial"`
	Forms        int `json:"forms_doubled"`
	Then         int `json:"partial_then_cancelled"`
	TwoOperators int `json:"two_operators"`
	Races        int `json:"races"`
	// Asks are the refund operations (keys) sent: Refunded were answered
	// refunded (a 201, a 303 ?refund=refunded), Failed refused by the
	// provider for good (stored), Refused refused with nothing reserved
	// (cancelled already, more than is left), Unresolved had no final
	// answer when the drive ended (left to the refund completer).
	Asks       int `json:"asks"`
	Refunded   int `json:"refunded"`
	Failed     int `json:"failed"`
	Refused    int `json:"refused"`
	Unresolved int `json:"unresolved"`
	// Pending counts the 503 refund-pending answers (a lost provider
	// answer, resumed by the retry with the same key); Requests every
	// refund request sent, operator pages included.
	Pending  int `json:"pending_answers"`
	Requests int `json:"requests"`
}

// restockEvery is how often the contended product gets LastItems more;
// lastItemShare is the share of carts it is put in, one unit.
const (
	restockEvery  = 5 * time.Second
	lastItemShare = 0.25
)

// refundFaults are the provider's refund faults while clients drive, with
// refunds on: lost answers before and after the refund, and hangs, at the
// charging calls' rates (faultRates).
func refundFaults(cfg Config) map[string]any {
	if cfg.Refunds <= 0 {
		return nil
	}
	return map[string]any{"rates": map[string]any{"before_charge": 0.05, "after_charge": 0.1, "timeout": 0.05}}
}

// stockUp gives the contended product LastItems units now and again every
// restockEvery until no checkout starts any more. A delivery that meets a
// database down is skipped: the next one comes.
func (d *driver) stockUp(ctx context.Context) {
	if d.cfg.LastItems <= 0 || d.contended == "" {
		return
	}
	receive := func() {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := d.cl.db.Queries.ReceiveStock(ctx, db.ReceiveStockParams{Sku: d.contended, Quantity: int32(d.cfg.LastItems)}); err != nil {
			d.logf("stock of %s not received: %v", d.contended, err)
		}
	}
	receive()
	go func() {
		t := time.NewTicker(restockEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if time.Now().After(d.stopNew) {
					return
				}
				receive()
			}
		}
	}()
}

// refundAnswer is one answer to a refund request, judged.
type refundAnswer int

const (
	// again: no answer, or one the key's retry may change (in progress,
	// refund-pending, an outage): the client asks again with the key.
	again refundAnswer = iota
	// refunded, failed: the key's stored answer, refunded or refused by
	// the provider for good.
	refunded
	failed
	// refused: nothing reserved (cancelled already, window closed, more
	// than is left), the key given up.
	refused
	// wrong: an answer no refund request may get (judged by saw).
	wrong
)

// refundAsk is one refund operation under one key: how to send it once.
type refundAsk struct {
	kind     string // history.KindCancel or history.KindRefund
	scope    string // the key's scope: the customer, or "operator"
	key      string
	client   int
	attempts func(ctx context.Context, n int) []shot // n shots at once, to random shops
}

// run sends a until its answer is final, or refused, or the drive's retries
// are over, n shots at once the first time, and counts how it ended.
func (d *driver) runAsk(ctx context.Context, a refundAsk, n int, c *client.Client) refundAnswer {
	d.refunds(func(r *RefundClients) { r.Asks++ })
	end := again
	for retry := 0; time.Now().Before(d.giveUp) && ctx.Err() == nil; retry++ {
		shots := a.attempts(ctx, n)
		n = 1
		var header http.Header
		for _, sh := range shots {
			// A final answer wins over a refusal (the other shot's, met
			// while the first ran), which wins over none.
			if got := d.judgeRefund(a, sh); end == again || got == refunded || got == failed {
				end = max(end, got)
				if got == refunded || got == failed {
					end = got
				}
			}
			if sh.resp != nil && header == nil {
				header = sh.resp.Header
			}
		}
		if end != again {
			break
		}
		if ctx.Err() != nil {
			break
		}
		sleep(ctx, c.Backoff(min(retry, 5), header))
	}
	d.refunds(func(r *RefundClients) {
		switch end {
		case refunded:
			r.Refunded++
		case failed:
			r.Failed++
		case refused:
			r.Refused++
		case again:
			r.Unresolved++
		}
	})
	return end
}

// judgeRefund records one answer to a refund request in the history and
// judges it: a 500 and a 503 without Retry-After are violations anywhere,
// and a status no refund request may get is one too.
func (d *driver) judgeRefund(a refundAsk, sh shot) refundAnswer {
	op := history.Op{Client: a.client, Kind: a.kind, Customer: a.scope, Key: a.key, Shop: sh.shop}
	if sh.err != nil {
		op.Err = sh.err.Error()
	}
	got := again
	if sh.resp != nil {
		op.Status = sh.resp.StatusCode
		op.Replayed = sh.resp.Header.Get(idem.HeaderReplayed) == "true"
		op.Problem = answerProblem(sh)
		if op.Status == http.StatusCreated {
			var out struct {
				ID string `json:"id"`
			}
			json.Unmarshal(sh.body, &out) //nolint:errcheck // judged by the history: no id, no match
			op.RefundID = out.ID
		}
		op.Location = sh.resp.Header.Get("Location")
		got = judgeRefundStatus(op)
	}
	d.res.hist.Add(op, sh.sent, sh.done, sh.body)
	d.count(sh)
	d.refunds(func(r *RefundClients) {
		r.Requests++
		if op.Problem == problem.RefundPending.Type() {
			r.Pending++
		}
	})
	what := strings.TrimSpace(fmt.Sprintf("%s %s %s %s", a.kind, a.scope, a.key, op.Problem))
	switch {
	case op.Status == http.StatusInternalServerError:
		d.violate(violServerError, what)
	case op.Status == http.StatusServiceUnavailable && sh.resp.Header.Get("Retry-After") == "":
		d.violate(violNoRetryAfter, what)
	case got == wrong:
		d.violate(violUnexpectedStatus, fmt.Sprintf("%s: %d %s", what, op.Status, strings.TrimSpace(string(sh.body))))
	}
	return got
}

// judgeRefundStatus is what an answer says of its refund key.
func judgeRefundStatus(op history.Op) refundAnswer {
	switch {
	case op.Status == http.StatusCreated:
		return refunded
	case op.Status == http.StatusSeeOther && strings.HasSuffix(op.Location, "refund=refunded"):
		return refunded
	case op.Status == http.StatusSeeOther && strings.HasSuffix(op.Location, "refund=failed"),
		op.Problem == problem.RefundRefused.Type():
		return failed
	case op.Problem == problem.OrderCancelled.Type(), op.Problem == problem.CancelWindowClosed.Type(),
		op.Problem == problem.RefundExceeds.Type():
		return refused
	case op.Status == http.StatusConflict, op.Status == http.StatusTooManyRequests, op.Status/100 == 5:
		return again
	}
	return wrong
}

// adminKinds are the problems the admin listener answers as text, by
// their title (internal/app/admin_refund.go): read back as their types, so
// that the history judges both listeners' answers alike.
var adminKinds = []problem.Kind{problem.KeyInUse, problem.LockLost, problem.RefundExceeds, problem.RefundPending,
	problem.RefundRefused, problem.OrderCancelled, problem.Unavailable}

// answerProblem is an answer's problem type: a problem+json body's, or an
// admin listener's text answer's, read from its title.
func answerProblem(sh shot) string {
	if t, ok := problemType(sh.resp, sh.body); ok {
		return t
	}
	if sh.resp.StatusCode < 400 {
		return ""
	}
	for _, k := range adminKinds {
		if bytes.HasPrefix(sh.body, []byte(k.Title+":")) {
			return k.Type()
		}
	}
	return ""
}

func (d *driver) refunds(count func(*RefundClients)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	count(&d.res.Refunds)
}

// afterOrder is what a client does with a placed order of amount: now and
// then (Config.Refunds) cancel it, have an operator refund part of it, or
// both at once.
func (d *driver) afterOrder(ctx context.Context, c *client.Client, n int, customer uuid.UUID, order uuid.UUID, amount int64, rng *rand.Rand) {
	if d.cfg.Refunds <= 0 || amount < 2 || rng.Float64() >= d.cfg.Refunds {
		return
	}
	d.refunds(func(r *RefundClients) { r.Orders++ })
	part := func(from, to float64) int64 {
		return max(1, min(amount, int64(float64(amount)*(from+(to-from)*rng.Float64()))))
	}
	switch u := rng.Float64(); {
	case u < 0.3:
		twice := rng.Float64() < 0.25
		d.refunds(func(r *RefundClients) {
			r.Cancels++
			if twice {
				r.Doubled++
			}
		})
		d.cancel(ctx, c, n, customer, order, twice)
		if rng.Float64() < 0.3 {
			d.refunds(func(r *RefundClients) { r.Second++ })
			d.cancel(ctx, c, n, customer, order, false)
		}
	case u < 0.6:
		twice := rng.Float64() < 0.25
		d.refunds(func(r *RefundClients) {
			r.Partial++
			if twice {
				r.Forms++
			}
		})
		d.operatorRefund(ctx, c, n, order, part(0.1, 0.5), twice)
		if rng.Float64() < 0.3 {
			d.operatorRefund(ctx, c, n, order, part(0.1, 0.5), false)
		}
		if rng.Float64() < 0.3 {
			d.refunds(func(r *RefundClients) { r.Then++ })
			d.cancel(ctx, c, n, customer, order, false)
		}
	case u < 0.8:
		d.refunds(func(r *RefundClients) { r.TwoOperators++ })
		a, b := part(0.4, 0.7), part(0.4, 0.7)
		var wg sync.WaitGroup
		wg.Go(func() { d.operatorRefund(ctx, c, n, order, a, false) })
		wg.Go(func() { d.operatorRefund(ctx, c, n, order, b, false) })
		wg.Wait()
	default:
		d.refunds(func(r *RefundClients) { r.Races++ })
		p := part(0.3, 0.6)
		var wg sync.WaitGroup
		wg.Go(func() { d.operatorRefund(ctx, c, n, order, p, false) })
		wg.Go(func() { d.cancel(ctx, c, n, customer, order, false) })
		wg.Wait()
	}
}

// cancel is the customer's cancel of order under a key of its own, sent
// twice at once the first time when twice, retried with the key.
func (d *driver) cancel(ctx context.Context, c *client.Client, n int, customer, order uuid.UUID, twice bool) {
	key := uuid.NewString()
	path := "/api/orders/" + order.String() + "/cancel"
	a := refundAsk{kind: history.KindCancel, scope: customer.String(), key: key, client: n,
		attempts: func(ctx context.Context, k int) []shot {
			return d.fire(ctx, k, d.cl.targets, func(ctx context.Context, shop string) (*http.Request, error) {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+shop+path, nil)
				if err != nil {
					return nil, err
				}
				req.Header.Set("Authorization", "Bearer "+c.Token)
				req.Header.Set("Idempotency-Key", `"`+key+`"`)
				return req, nil
			})
		}}
	d.runAsk(ctx, a, map[bool]int{true: 2, false: 1}[twice], c)
}

// formKey finds the refund form's key fields in the admin order page.
var formKey = regexp.MustCompile(`name="` + idem.KeyField + `" value="([^"]+)"[^>]*><input type="hidden" name="` + idem.SigField + `" value="([^"]+)"`)

// operatorRefund is an operator's refund of amount (minor units) of order
// on the admin listeners: the order's page read for a fresh form key, then
// the form sent (twice at once the first time when twice) and retried
// with the key, to any shop's admin listener.
func (d *driver) operatorRefund(ctx context.Context, c *client.Client, n int, order uuid.UUID, amount int64, twice bool) {
	page := "/orders/" + order.String()
	var key, sig string
	for retry := 0; key == "" && time.Now().Before(d.giveUp) && ctx.Err() == nil; retry++ {
		sh := d.adminShot(ctx, func(ctx context.Context, shop string) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, "http://"+shop+page, nil)
		})
		d.count(sh)
		d.refunds(func(r *RefundClients) { r.Requests++ })
		switch {
		case sh.resp == nil:
		case sh.resp.StatusCode == http.StatusOK:
			if m := formKey.FindSubmatch(sh.body); m != nil {
				key, sig = string(m[1]), string(m[2])
				continue
			}
			d.violate(violUnexpectedStatus, "GET admin "+page+": no refund form")
			return
		case sh.resp.StatusCode == http.StatusInternalServerError:
			d.violate(violServerError, "GET admin "+page)
		case sh.resp.StatusCode == http.StatusServiceUnavailable && sh.resp.Header.Get("Retry-After") == "":
			d.violate(violNoRetryAfter, "GET admin "+page)
		}
		var header http.Header
		if sh.resp != nil {
			header = sh.resp.Header
		}
		sleep(ctx, c.Backoff(min(retry, 5), header))
	}
	if key == "" {
		return
	}
	form := url.Values{"amount": {fmt.Sprintf("%d.%02d", amount/100, amount%100)}, "reason": {"chaos operator"},
		idem.KeyField: {key}, idem.SigField: {sig}}.Encode()
	a := refundAsk{kind: history.KindRefund, scope: "operator", key: key, client: n,
		attempts: func(ctx context.Context, k int) []shot {
			return d.fire(ctx, k, d.cl.admins, func(ctx context.Context, shop string) (*http.Request, error) {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+shop+page+"/refunds", strings.NewReader(form))
				if err != nil {
					return nil, err
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Authorization", "Bearer "+d.cl.adminToken)
				return req, nil
			})
		}}
	d.runAsk(ctx, a, map[bool]int{true: 2, false: 1}[twice], c)
}

// adminShot sends one request made by mk to a random admin listener, with
// the operator's credential, and reads its answer whole.
func (d *driver) adminShot(ctx context.Context, mk func(context.Context, string) (*http.Request, error)) shot {
	return d.fire(ctx, 1, d.cl.admins, func(ctx context.Context, shop string) (*http.Request, error) {
		req, err := mk(ctx, shop)
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+d.cl.adminToken)
		}
		return req, err
	})[0]
}

// fire sends k requests made by mk at once, each to a shop picked at random
// among targets, and reads their answers whole. Redirects are answers, not
// followed.
func (d *driver) fire(ctx context.Context, k int, targets []string, mk func(context.Context, string) (*http.Request, error)) []shot {
	shots := make([]shot, k)
	var wg sync.WaitGroup
	for i := range shots {
		d.mu.Lock()
		shop := targets[d.pick.IntN(len(targets))]
		d.mu.Unlock()
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, d.cfg.RequestTimeout)
			defer cancel()
			sent := time.Now()
			req, err := mk(ctx, shop)
			if err != nil {
				shots[i] = shot{err: err, shop: shop, sent: sent, done: time.Now()}
				return
			}
			resp, err := d.base.RoundTrip(req)
			if err != nil {
				shots[i] = shot{err: err, shop: shop, sent: sent, done: time.Now()}
				return
			}
			var b bytes.Buffer
			_, err = b.ReadFrom(resp.Body)
			resp.Body.Close()
			if err != nil {
				shots[i] = shot{err: err, shop: shop, sent: sent, done: time.Now()}
				return
			}
			shots[i] = shot{resp: resp, body: b.Bytes(), shop: shop, sent: sent, done: time.Now()}
		})
	}
	wg.Wait()
	return shots
}

// refundsLine says what the refund clients did and what the books hold.
func refundsLine(c RefundClients, t RefundTotals) string {
	if c.Orders == 0 && t.Stock == "" {
		return ""
	}
	return fmt.Sprintf("\nchaos: refunds: %d orders picked (%d cancelled, %d of them twice at once, %d cancelled again under a second key; "+
		"%d refunded in part by an operator, %d forms sent twice at once, %d then cancelled; %d by two operators at once; %d operator and cancel racing): "+
		"%d refund keys, %d refunded, %d refused by the provider, %d refused with nothing reserved, %d unresolved; %d refund-pending answers in %d requests; "+
		"books: %d refunds recorded (%d cancels) of %d, %d at the provider; %d sold-out answers; stock %s",
		c.Orders, c.Cancels, c.Doubled, c.Second, c.Partial, c.Forms, c.Then, c.TwoOperators, c.Races,
		c.Asks, c.Refunded, c.Failed, c.Refused, c.Unresolved, c.Pending, c.Requests,
		t.Refunds, t.Cancelled, t.Amount, t.ProviderRefunds, t.SoldOut, t.Stock)
}

// pickContended is the product whose last items the clients contend for:
// the first of the catalog, taken out of the random carts (cart puts it in
// a share of its own).
func pickContended(products []product, cfg Config) (string, []product) {
	if cfg.LastItems <= 0 || len(products) < 2 {
		return "", products
	}
	return products[0].SKU, products[1:]
}

// lastItem is the contended product's line for a cart, or false.
func (d *driver) lastItem(rng *rand.Rand) (client.Item, bool) {
	if d.contended == "" || rng.Float64() >= lastItemShare {
		return client.Item{}, false
	}
	return client.Item{SKU: d.contended, Quantity: 1}, true
}

// soldOut reports whether err is a 409 sold-out.
func soldOut(err error) bool {
	var p *client.Problem
	return errors.As(err, &p) && p.Status == http.StatusConflict && p.Type == problem.SoldOut.Type()
}
