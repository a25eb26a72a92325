package chaos

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	"exactlyonce/client"
)

// Keys are scoped to their customer (docs/kit.md): the same key sent by
// two customers is two operations, each charged and answered for itself.
// Random keys never meet, so the promise is tested by a client's twin: a
// second customer of the same client, who now and then (Config.SharedKeys)
// sends a checkout the client has just placed, with the same key and the
// same body. Its answer must be an order of its own; an answer naming the
// first customer's order (a replay looked up without the customer) is for
// the history checker to find.

// twin registers the client's second customer, or returns nil when the
// run shares no keys. keyFile is its key store; rng is the client's
// network rng, used by the client's goroutine only, as the twin is.
func (d *driver) twin(ctx context.Context, n int, keyFile string, rng *rand.Rand) *client.Client {
	if d.cfg.SharedKeys <= 0 {
		return nil
	}
	c := client.New(anyShop, "", client.NewFileStore(keyFile))
	n += d.cfg.Clients
	sp := &spread{d: d, rng: rng, double: 0.1, client: n, twin: true}
	c.HTTP = &http.Client{Timeout: d.cfg.RequestTimeout, Transport: sp}
	c.BaseDelay, c.MaxDelay = clientBaseDelay, clientMaxDelay
	customer, token, ok := d.register(ctx, c, n)
	if !ok {
		return nil
	}
	c.Token, sp.customer = token, customer
	return c
}

// sameKeyOtherCustomer sends op, placed by c with the key e and the body
// req, once more from c, then from twin with the same key and body. c's
// replay comes first so that the shop answering it remembers the answer
// (idem.Answers), where a lookup that forgets the customer would find it.
func (d *driver) sameKeyOtherCustomer(ctx context.Context, c, twin *client.Client, op string, e client.Entry, req client.OrderRequest) {
	if req.ReturnURL != "" {
		// The 3-D Secure card would send the twin to the bank: not this test.
		return
	}
	c.MaxElapsed = time.Until(d.giveUp)
	c.PlaceOrder(ctx, op, req) //nolint:errcheck // judged by the transport
	twinOp := op + "-twin"
	if err := twin.Keys.Put(twinOp, e); err != nil {
		d.logf("%s: twin's key not saved: %v", op, err)
		return
	}
	twin.MaxElapsed = time.Until(d.giveUp)
	twin.PlaceOrder(ctx, twinOp, req) //nolint:errcheck // judged by the history
	twin.Keys.Forget(twinOp)          //nolint:errcheck // a key left in the file is harmless
	d.mu.Lock()
	d.res.SharedKeys++
	d.mu.Unlock()
}
