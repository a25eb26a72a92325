package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// declinedCard is the fake provider's card that is always declined.
const declinedCard = "4000000000000002"

// Clients is what the clients did and were told.
type Clients struct {
	Checkouts int `json:"checkouts"`
	// Placed got a 201; Declined and NotCompleted a final 402 (the card
	// was declined, or the completer closed the key with no charge);
	// Unresolved were still retrying when the drive ended, and were left
	// to the completer.
	Placed       int `json:"placed"`
	Declined     int `json:"declined"`
	NotCompleted int `json:"not_completed"`
	Unresolved   int `json:"unresolved"`
	// Attempts counts requests; Doubled the attempts fired twice at once.
	Attempts int `json:"attempts"`
	Doubled  int `json:"doubled"`
	Replays  int `json:"replays"`
	// Statuses counts answers by status; "none" is no answer (refused,
	// reset, timed out).
	Statuses map[string]int `json:"statuses"`

	outcomes   []outcome
	violations []violation
}

// outcome is the final answer a client was given for one checkout.
type outcome struct {
	customer uuid.UUID
	key      string
	status   int // 201, 402, or 0 when unresolved
	orderID  uuid.UUID
	problem  string
}

// answer is one response, read whole.
type answer struct {
	status     int // 0: none
	retryAfter time.Duration
	orderID    uuid.UUID
	problem    string
	err        error
}

// driver is the state the clients share.
type driver struct {
	cfg      Config
	cl       *cluster
	products []product
	http     *http.Client
	next     atomic.Int64 // the next checkout to place
	began    time.Time
	stopNew  time.Time // no checkout starts after this
	giveUp   time.Time // no checkout retries after this

	mu  sync.Mutex
	res Clients
}

// drive runs the clients until every checkout is done or time is up.
func drive(ctx context.Context, cl *cluster, cfg Config, products []product, rng *rand.Rand, logf func(string, ...any)) Clients {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = cfg.Clients * 2
	now := time.Now()
	d := &driver{
		cfg: cfg, cl: cl, products: products, began: now,
		http: &http.Client{Timeout: cfg.RequestTimeout, Transport: transport},
		// A client that fell behind the schedule (its shop was paused) may
		// still start its checkouts during the first half of the drain.
		stopNew: now.Add(cfg.Duration + cfg.Drain/2), giveUp: now.Add(cfg.Duration + cfg.Drain),
		res: Clients{Statuses: map[string]int{}},
	}
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		seed1, seed2 := rng.Uint64(), rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.client(ctx, i, rand.New(rand.NewPCG(seed1, seed2)))
		}()
	}
	progress := time.NewTicker(5 * time.Second)
	defer progress.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			return d.res
		case <-progress.C:
			d.mu.Lock()
			logf("%d checkouts done, %d placed, %d attempts", len(d.res.outcomes), d.res.Placed, d.res.Attempts)
			d.mu.Unlock()
		}
	}
}

// client is one shopper placing checkouts one after another.
func (d *driver) client(ctx context.Context, n int, rng *rand.Rand) {
	customer, token, ok := d.register(ctx, n, rng)
	if !ok {
		return
	}
	for ctx.Err() == nil {
		i := d.next.Add(1) - 1
		if i >= int64(d.cfg.Checkouts) {
			return
		}
		// Checkouts are spread evenly over the drive, so that every
		// disruption meets some in flight.
		sleep(ctx, time.Until(d.began.Add(time.Duration(i)*d.cfg.Duration/time.Duration(d.cfg.Checkouts))))
		if time.Now().After(d.stopNew) {
			return
		}
		o := d.checkout(ctx, customer, token, rng)
		d.mu.Lock()
		d.res.Checkouts++
		d.res.outcomes = append(d.res.outcomes, o)
		switch {
		case o.status == http.StatusCreated:
			d.res.Placed++
		case o.status == http.StatusPaymentRequired && o.problem == "/problems/payment-declined":
			d.res.Declined++
		case o.status == http.StatusPaymentRequired:
			d.res.NotCompleted++
		default:
			d.res.Unresolved++
		}
		d.mu.Unlock()
	}
}

// register creates the client's customer, retrying through the chaos.
func (d *driver) register(ctx context.Context, n int, rng *rand.Rand) (uuid.UUID, string, bool) {
	for attempt := 0; time.Now().Before(d.stopNew) && ctx.Err() == nil; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, d.shopURL(rng)+"/api/customers",
			bytes.NewBufferString(`{"name":"chaos client `+strconv.Itoa(n)+`"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.http.Do(req)
		if err == nil {
			var out struct {
				ID    uuid.UUID `json:"id"`
				Token string    `json:"token"`
			}
			status := resp.StatusCode
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			d.count(status)
			if status == http.StatusInternalServerError {
				d.violate(violServerError, "POST /api/customers")
			}
			if status == http.StatusCreated && err == nil {
				return out.ID, out.Token, true
			}
		} else {
			d.count(0)
		}
		sleep(ctx, backoff(rng, attempt))
	}
	return uuid.UUID{}, "", false
}

// checkout places one logical checkout under one key, retrying until it
// has a final answer (201 or 402) or time is up.
func (d *driver) checkout(ctx context.Context, customer uuid.UUID, token string, rng *rand.Rand) outcome {
	o := outcome{customer: customer, key: uuid.NewString()}
	body := d.cart(rng)
	for attempt := 0; ; attempt++ {
		if time.Now().After(d.giveUp) || ctx.Err() != nil {
			return o
		}
		shots := 1
		if rng.Float64() < 0.1 {
			shots = 2
		}
		answers := make([]answer, shots)
		var wg sync.WaitGroup
		for i := range shots {
			url := d.shopURL(rng)
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = d.order(ctx, url, token, o.key, body)
			}()
		}
		wg.Wait()
		d.mu.Lock()
		d.res.Attempts += shots
		if shots == 2 {
			d.res.Doubled++
		}
		d.mu.Unlock()

		var wait time.Duration
		for _, a := range answers {
			d.count(a.status)
			switch a.status {
			case http.StatusCreated:
				if o.status == http.StatusPaymentRequired || (o.status == http.StatusCreated && o.orderID != a.orderID) {
					d.violate(violContradiction, fmt.Sprintf("key %s: %d %s then 201 %s", o.key, o.status, o.orderID, a.orderID))
				}
				o.status, o.orderID = a.status, a.orderID
			case http.StatusPaymentRequired:
				if o.status == http.StatusCreated {
					d.violate(violContradiction, fmt.Sprintf("key %s: 201 %s then 402 %s", o.key, o.orderID, a.problem))
				}
				if o.status == 0 {
					o.status, o.problem = a.status, a.problem
				}
			case http.StatusInternalServerError:
				d.violate(violServerError, fmt.Sprintf("key %s: %s", o.key, a.problem))
			case 0, http.StatusConflict, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
				// The outcome is unknown or not final: retry.
				wait = max(wait, a.retryAfter)
			default:
				d.violate(violUnexpectedStatus, fmt.Sprintf("key %s: %d %s", o.key, a.status, a.problem))
				return o
			}
		}
		if o.status != 0 {
			if o.status == http.StatusCreated && rng.Float64() < 0.1 {
				d.replay(ctx, rng, token, body, o)
			}
			return o
		}
		sleep(ctx, max(backoff(rng, attempt), min(wait, 3*time.Second)))
	}
}

// replay sends a placed checkout once more: it must answer the same order.
func (d *driver) replay(ctx context.Context, rng *rand.Rand, token string, body []byte, o outcome) {
	a := d.order(ctx, d.shopURL(rng), token, o.key, body)
	d.count(a.status)
	d.mu.Lock()
	d.res.Replays++
	d.mu.Unlock()
	if a.status == http.StatusCreated && a.orderID != o.orderID {
		d.violate(violContradiction, fmt.Sprintf("key %s: 201 %s, replayed as 201 %s", o.key, o.orderID, a.orderID))
	}
	if a.status == http.StatusInternalServerError {
		d.violate(violServerError, "replay of key "+o.key)
	}
}

// order sends one POST /api/orders.
func (d *driver) order(ctx context.Context, base, token, key string, body []byte) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/orders", bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", `"`+key+`"`)
	resp, err := d.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		// Cut off mid-answer: as good as none.
		return answer{err: err}
	}
	a := answer{status: resp.StatusCode}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		a.retryAfter = time.Duration(s) * time.Second
	}
	var out struct {
		OrderID uuid.UUID `json:"order_id"`
		Type    string    `json:"type"`
	}
	json.Unmarshal(b, &out) //nolint:errcheck // a body that is not JSON leaves both empty
	a.orderID, a.problem = out.OrderID, out.Type
	return a
}

// cart is a random order body: one to three products, now and then the
// card the provider always declines.
func (d *driver) cart(rng *rand.Rand) []byte {
	type line struct {
		SKU      string `json:"sku"`
		Quantity int    `json:"quantity"`
	}
	var req struct {
		Items []line `json:"items"`
		Card  string `json:"card,omitempty"`
	}
	for _, i := range rng.Perm(len(d.products))[:1+rng.IntN(min(3, len(d.products)))] {
		req.Items = append(req.Items, line{SKU: d.products[i].SKU, Quantity: 1 + rng.IntN(3)})
	}
	if rng.Float64() < 0.03 {
		req.Card = declinedCard
	}
	b, _ := json.Marshal(req)
	return b
}

// shopURL picks a shop at random, as a load balancer spreading requests would.
func (d *driver) shopURL(rng *rand.Rand) string {
	return "http://" + d.cl.shops[rng.IntN(len(d.cl.shops))].addr
}

func (d *driver) count(status int) {
	name := "none"
	if status != 0 {
		name = strconv.Itoa(status)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.res.Statuses[name]++
}

func (d *driver) violate(kind, example string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.res.violations = append(d.res.violations, violation{kind, example})
}

// backoff is exponential with full jitter: a random wait up to 50 ms × 2^n,
// capped at 2 s, so that clients retrying after one outage do not all come
// back at the same instant.
func backoff(rng *rand.Rand, attempt int) time.Duration {
	ceiling := min(2*time.Second, 50*time.Millisecond<<min(attempt, 10))
	return time.Duration(rng.Int64N(int64(ceiling)) + 1)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
