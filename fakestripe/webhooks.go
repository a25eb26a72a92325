package fakestripe

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

// event is an event a request caused: its type and the object it carries.
type event struct {
	typ    string
	object json.RawMessage
}

// webhooks sends events to the shop's endpoint, signed as Stripe signs them,
// at least once: an answer other than 2xx, or none, is retried with backoff
// (Stripe retries for three days; the fake for deliveryAttempts). The
// behaviour's webhook faults duplicate, reorder and delay deliveries, and
// can make a charging call wait for its event to be delivered before it
// answers. Events live in memory: a crash of the fake loses the ones not
// yet delivered, which the shop's reconciler is there to survive.
type webhooks struct {
	p           *Provider
	url, secret string
	ctx         context.Context
	stop        context.CancelFunc
	wg          sync.WaitGroup
	client      *http.Client
}

func newWebhooks(p *Provider) *webhooks {
	ctx, stop := context.WithCancel(context.Background())
	// The default transport keeps 2 idle connections per host: under a
	// burst of charges every other delivery would open a new one.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	return &webhooks{p: p, ctx: ctx, stop: stop, client: &http.Client{Transport: transport, Timeout: 5 * time.Second}}
}

func (w *webhooks) close() {
	w.stop()
	w.wg.Wait()
}

// deliveryAttempts bounds the deliveries of one event.
const deliveryAttempts = 8

// send delivers events, in the background unless the behaviour asks for
// the event before the answer, in which case send returns once each was
// delivered (or given up on).
func (w *webhooks) send(ctx context.Context, events []event) {
	if w.url == "" || len(events) == 0 {
		return
	}
	faults := w.p.Behaviour().Webhooks
	for _, ev := range events {
		// Drawn only when set, so that the draws of the other faults are
		// the ones tests with a fixed sequence expect.
		if faults.Lose > 0 && w.p.draw() < faults.Lose {
			continue
		}
		payload := w.payload(ev)
		copies := 1
		if w.p.draw() < faults.Duplicate {
			copies = 2
		}
		for range copies {
			delay := faults.Delay
			if w.p.draw() < faults.Reorder {
				// Held back long enough for a later event to overtake it.
				delay += reorderDelay/2 + rand.N(reorderDelay/2)
			}
			if faults.BeforeAnswer {
				w.deliver(ctx, payload, delay)
				continue
			}
			w.wg.Go(func() { w.deliver(w.ctx, payload, delay) })
		}
	}
}

// reorderDelay is how long a reordered delivery is held back at most.
const reorderDelay = 400 * time.Millisecond

// payload is the event as Stripe sends it.
func (w *webhooks) payload(ev event) []byte {
	return mustJSON(map[string]any{
		"id": newID("evt_"), "object": "event", "api_version": stripe.APIVersion, "created": time.Now().Unix(),
		"data": map[string]any{"object": ev.object}, "livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil}, "type": ev.typ,
	})
}

// deliver posts payload after delay, retrying until a 2xx answer, the
// attempts run out or ctx ends.
func (w *webhooks) deliver(ctx context.Context, payload []byte, delay time.Duration) {
	wait := 50 * time.Millisecond
	for attempt := 1; attempt <= deliveryAttempts; attempt++ {
		if err := sleep(ctx, delay); err != nil {
			return
		}
		err := w.post(ctx, payload)
		if err == nil {
			return
		}
		w.p.log.InfoContext(ctx, "fakestripe: webhook delivery failed; retrying", "attempt", attempt, "err", err)
		delay, wait = wait, min(2*wait, 5*time.Second)
	}
}

// post sends one delivery, signed with the secret: Stripe-Signature
// t=<unix time>,v1=<HMAC-SHA256 of "t.payload">, the scheme the SDK's
// webhook.ConstructEvent checks.
func (w *webhooks) post(ctx context.Context, payload []byte) error {
	now := time.Now()
	signature := hex.EncodeToString(webhook.ComputeSignature(now, payload, w.secret))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", now.Unix(), signature))
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
