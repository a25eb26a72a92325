package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"exactlyonce/bench/chaos/history"
	"exactlyonce/client"
)

// declinedCard is the fake provider's card that is always declined, and
// authenticationCard the one whose bank always asks for 3-D Secure.
const (
	declinedCard       = "4000000000000002"
	authenticationCard = "4000002760003184"
)

// returnURL is the chaos clients' return_url: where the bank would send the
// card holder back. The client plays the card holder itself, so nothing
// is served there.
const returnURL = "https://chaos-client.example/back"

// notCompleted is the problem type of the completer's verdict: the key's
// client went quiet, and the operation was closed with no charge.
const notCompleted = "/problems/payment-not-completed"

// The clients' backoff (package client): from BaseDelay doubling up to
// MaxDelay, or a Retry-After (the shop's are 5 s at most) plus up to
// BaseDelay.
const (
	clientBaseDelay = 50 * time.Millisecond
	clientMaxDelay  = 2 * time.Second
	maxRetryAfter   = 5 * time.Second
)

// anyShop is the base URL the clients are given. It names no server: the
// harness's transport (spread) sends each request to a shop it picks.
const anyShop = "http://any-shop"

// Clients is what the clients did and were told.
type Clients struct {
	Checkouts int `json:"checkouts"`
	// Placed got a 201, or found the order by reconciling (Reconciled of
	// them) when the client's retrying stopped; Declined and NotCompleted
	// a final 402 (the card was declined, or the completer closed the key
	// with no charge); Unresolved were still open when the drive ended,
	// and were left to the completer.
	Placed     int `json:"placed"`
	Reconciled int `json:"reconciled"`
	// SoldOut were told 409 sold-out: the contended product's last items
	// were taken (Config.LastItems); nothing was charged.
	SoldOut int `json:"sold_out"`
	// Refunds is what the refund clients did (refunds.go).
	Refunds      RefundClients `json:"refunds"`
	Declined     int           `json:"declined"`
	NotCompleted int           `json:"not_completed"`
	Unresolved   int           `json:"unresolved"`
	// NotCompletedWhileRetrying counts the "payment not completed" 402s
	// (the completer's verdict on a key it found abandoned) answered to a
	// client that was still retrying that key, during the drive. The
	// completer waits COMPLETER_GRACE from a key's last ask; with a grace
	// longer than a client's longest silence between two asks
	// (Config.gracePromised), it must be 0.
	NotCompletedWhileRetrying int `json:"not_completed_while_retrying"`
	// NotHeard counts those of them whose client no running shop heard
	// within the grace before the completer took the key: its requests
	// went to shops that were paused or down, and the only one that
	// could hear it was never sent one. No shop can keep a promise to a
	// client it never heard from; they are reported, not failed on.
	NotHeard int `json:"not_completed_while_retrying_not_heard"`
	// Authentication is what the clients that paid with the 3-D Secure
	// card did at the bank's page.
	Authentication Authentications `json:"authentication"`
	// Attempts counts order requests sent, replays included; Doubled the
	// attempts fired twice at once.
	Attempts int `json:"attempts"`
	Doubled  int `json:"doubled"`
	Replays  int `json:"replays"`
	// SharedKeys counts the checkouts a client's twin sent again with the
	// same key as another customer (twin.go).
	SharedKeys int `json:"shared_keys"`
	// Statuses counts every answer the clients got, by status; "none" is
	// no answer (refused, reset, timed out). Problems counts the 4xx and
	// 5xx answers with a problem+json body by status and type, such as
	// "503 /problems/service-unavailable".
	Statuses map[string]int `json:"statuses"`
	Problems map[string]int `json:"problems"`

	// CreatedPerSecond is the rate of 201s to orders over the drive, to
	// hold the rate during each disruption against (Disruptions.Windows);
	// CreatedPerSecondClear the rate outside the disruptions that slow
	// orders by themselves (PostgreSQL stalls and crashes, a shop's
	// SIGSTOP, and 5 s after each).
	CreatedPerSecond      float64 `json:"created_per_second"`
	CreatedPerSecondClear float64 `json:"created_per_second_clear"`

	// LongestOutage is the drive's longest span without a 201 to an order.
	LongestOutage Outage `json:"longest_outage"`

	outcomes   []outcome
	violations []violation
	// contradictions are the keys whose final answers disagreed, judged
	// after the run against the database (check), which can tell whether
	// the first answer's record is gone.
	contradictions []contradiction
	// answers is every answer to an order, and when it came.
	answers []answered
	// began is when the drive began; created are the moments the 201s to
	// orders arrived.
	began   time.Time
	created []time.Time
	// tries is each key's order requests, and retried the 402s "not
	// completed" a retrying client was given, judged after the run
	// against the database and the shops' deaf spans (check).
	tries   map[string][]tried
	retried []string
	// heard says whether the shop at an address could hear a request
	// sent at from and given up on at to (process.heard); false for an
	// address that is no shop of the run's (HAProxy's).
	heard func(addr string, from, to time.Time) bool
	// heardFrom says when the shop at an address could first hear a
	// request sent at a moment (process.heardFrom).
	heardFrom func(addr string, sent time.Time) time.Time
	// hist is every order request's answer, for the history checker
	// (record.go).
	hist *history.Recorder
}

// tried is one order request of a key, as its client saw it.
type tried struct {
	sent, answered time.Time
	shop           string // the address it was sent to
	status         int    // 0: no answer
	problem, err   string
}

// line is the request for a violation's example, in seconds into the
// drive set by began.
func (t tried) line(began time.Time) string {
	what := strconv.Itoa(t.status)
	switch {
	case t.status == 0:
		what = "no answer (" + t.err + ")"
	case t.problem != "":
		what += " " + path.Base(t.problem)
	}
	return fmt.Sprintf("%.1fs→%.1fs %s", t.sent.Sub(began).Seconds(), t.answered.Sub(began).Seconds(), what)
}

// Authentications counts the 3-D Secure checkouts: Asked got a 202 (the
// card holder sent to the bank) at least once; of those, the card holder
// Completed the bank's page once, DoubleCompleted it twice at once, Failed
// it, or Abandoned it (never came back, and the client stopped asking: the
// completer cancels it past the window). Late counts the card holders who
// took a while at the bank, Slow the clients that asked again only a while
// after (the webhook may settle the order first).
type Authentications struct {
	Asked           int `json:"asked"`
	Completed       int `json:"completed"`
	DoubleCompleted int `json:"double_completed"`
	Failed          int `json:"failed"`
	Abandoned       int `json:"abandoned"`
	Late            int `json:"late"`
	Slow            int `json:"slow"`
}

func newClients() Clients {
	a := newAnswerCounts()
	return Clients{Statuses: a.statuses, Problems: a.problems, tries: map[string][]tried{}, hist: history.NewRecorder(time.Now())}
}

// outcome is the final answer a client was given for one checkout.
type outcome struct {
	customer uuid.UUID
	key      string
	status   int // 201, 402, 409 sold-out, or 0 when unresolved
	orderID  uuid.UUID
	amount   int64 // a 201's
	problem  string
}

// driver is the state the clients share.
type driver struct {
	cfg      Config
	cl       *cluster
	products []product
	// contended is the product whose last items clients contend for
	// (Config.LastItems), apart from products; "" for none. pick picks the
	// shop of a refund request (refunds.go), under mu.
	contended string
	pick      *rand.Rand
	base      http.RoundTripper // the connections to every shop
	next      atomic.Int64      // the next checkout to place
	began     time.Time
	stopNew   time.Time // no checkout starts after this
	giveUp    time.Time // no checkout retries after this
	logf      func(string, ...any)
	// bank is the card holders' browser at the fake bank's page: it does
	// not follow the page's way back to the shop (return_url names no
	// server), the client asks the shop itself.
	bank *http.Client

	mu  sync.Mutex
	res Clients
	// seen is the final answer (201 or 402) each key was first given, to
	// hold every later answer of the key against it.
	seen map[string]outcome
}

// drive runs the clients until every checkout is done or time is up.
func drive(ctx context.Context, cl *cluster, cfg Config, products []product, rng *rand.Rand, logf func(string, ...any)) Clients {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = cfg.Clients * 2
	now := time.Now()
	d := &driver{
		cfg: cfg, cl: cl, products: products, began: now, base: transport, logf: logf,
		// A client that fell behind the schedule (its shop was paused) may
		// still start its checkouts during the first half of the drain.
		stopNew: now.Add(cfg.Duration + cfg.Drain/2), giveUp: now.Add(cfg.Duration + cfg.Drain),
		res:  newClients(),
		seen: map[string]outcome{},
		pick: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())),
		bank: &http.Client{Timeout: cfg.RequestTimeout, Transport: transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
	d.res.heard, d.res.heardFrom = cl.heard, cl.heardFrom
	d.res.began = now
	d.res.hist = history.NewRecorder(now)
	keys := filepath.Join(cl.dir, "keys")
	if err := os.MkdirAll(keys, 0o755); err != nil {
		logf("no folder for the clients' keys: %v", err)
		return d.res
	}
	d.contended, d.products = pickContended(products, cfg)
	d.stockUp(ctx)
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		seed1, seed2, seed3, seed4 := rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.client(ctx, i, filepath.Join(keys, fmt.Sprintf("client-%d.json", i)),
				rand.New(rand.NewPCG(seed1, seed2)), rand.New(rand.NewPCG(seed3, seed4)))
		}()
	}
	progress := time.NewTicker(5 * time.Second)
	defer progress.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			n, _ := createdIn(d.res.created, now, now.Add(cfg.Duration))
			d.res.CreatedPerSecond = float64(n) / cfg.Duration.Seconds()
			d.res.LongestOutage = longestOutage(now, now.Add(cfg.Duration), d.res.created, d.res.answers)
			return d.res
		case <-progress.C:
			d.mu.Lock()
			logf("%d checkouts done, %d placed, %d attempts", len(d.res.outcomes), d.res.Placed, d.res.Attempts)
			d.mu.Unlock()
		}
	}
}

// client is one shopper placing checkouts one after another, through the
// Go client (package client) as any program using the API would: one key
// per checkout saved in a key store file before the first send, its
// backoff and Retry-After handling, its reconciling when retrying stops.
// What the harness adds sits in the client's transport (spread): a shop
// picked per request, some attempts fired twice at once, and every answer
// recorded for the checks. rng drives the checkouts, netRng the transport.
func (d *driver) client(ctx context.Context, n int, keyFile string, rng, netRng *rand.Rand) {
	c := client.New(anyShop, "", client.NewFileStore(keyFile))
	sp := &spread{d: d, rng: netRng, double: 0.1, client: n}
	c.HTTP = &http.Client{Timeout: d.cfg.RequestTimeout, Transport: sp}
	c.BaseDelay, c.MaxDelay = clientBaseDelay, clientMaxDelay

	customer, token, ok := d.register(ctx, c, n)
	if !ok {
		return
	}
	c.Token, sp.customer = token, customer
	twin := d.twin(ctx, n, strings.TrimSuffix(keyFile, ".json")+"-twin.json", netRng)
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
		o := d.checkout(ctx, c, twin, "checkout-"+strconv.FormatInt(i, 10), customer, rng)
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
		case o.status == http.StatusConflict:
			d.res.SoldOut++
		default:
			d.res.Unresolved++
		}
		d.mu.Unlock()
		if o.status == http.StatusCreated {
			d.afterOrder(ctx, c, n, customer, o.orderID, o.amount, rng)
		}
	}
}

// register creates the client's customer, retrying through the chaos with
// the client's backoff. Creating a customer takes no key, so PlaceOrder's
// retrying is not for it; a retry after a lost answer makes one more
// customer, which is harmless here.
func (d *driver) register(ctx context.Context, c *client.Client, n int) (uuid.UUID, string, bool) {
	body := []byte(`{"name":"chaos client ` + strconv.Itoa(n) + `"}`)
	for retry := 0; time.Now().Before(d.stopNew) && ctx.Err() == nil; retry++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, anyShop+"/api/customers", bytes.NewReader(body))
		if err != nil {
			return uuid.UUID{}, "", false
		}
		req.Header.Set("Content-Type", "application/json")
		var header http.Header
		if resp, err := c.HTTP.Do(req); err == nil {
			var out struct {
				ID    uuid.UUID `json:"id"`
				Token string    `json:"token"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated && err == nil {
				return out.ID, out.Token, true
			}
			header = resp.Header
		}
		sleep(ctx, c.Backoff(retry, header))
	}
	return uuid.UUID{}, "", false
}

// checkout places one logical checkout, op, with c until it has a final
// answer (201 or 402) or time is up; now and then it places it once more,
// which must replay the same order.
func (d *driver) checkout(ctx context.Context, c, twin *client.Client, op string, customer uuid.UUID, rng *rand.Rand) outcome {
	// The key is saved before anything is sent; PlaceOrder finds it in the
	// store and sends it.
	e, err := c.Keys.Key(op)
	if err != nil {
		d.logf("%s not placed: %v", op, err)
		return outcome{customer: customer}
	}
	o := outcome{customer: customer, key: e.Key}
	req := d.cart(rng)
	// The client stops retrying when the drive is over and reconciles;
	// the context only bounds that last look.
	c.MaxElapsed = time.Until(d.giveUp)
	ctx, cancel := context.WithDeadline(ctx, d.giveUp.Add(2*d.cfg.RequestTimeout))
	defer cancel()

	placed, err := c.PlaceOrder(ctx, op, req)
	var action *client.ActionRequiredError
	for asked := false; errors.As(err, &action); {
		if !asked {
			asked = true
			d.authenticated(func(a *Authentications) { a.Asked++ })
		}
		if !d.cardHolder(ctx, action.URL, rng) {
			// Never came back: the key is left to the completer.
			return o
		}
		c.MaxElapsed = time.Until(d.giveUp)
		placed, err = c.PlaceOrder(ctx, op, req)
	}
	var p *client.Problem
	switch {
	case err == nil:
		id, perr := uuid.Parse(placed.OrderID)
		if perr != nil {
			d.violate(violUnexpectedStatus, fmt.Sprintf("key %s: 201 with order id %q", e.Key, placed.OrderID))
			return o
		}
		o.status, o.orderID, o.amount = http.StatusCreated, id, placed.Amount
		if placed.Reconciled {
			// Found through the key's trail, not in an answer the
			// transport saw: hold it against the key's answers too.
			d.final(e.Key, http.StatusCreated, id, "")
			d.mu.Lock()
			d.res.Reconciled++
			d.mu.Unlock()
		}
	case errors.As(err, &p) && p.Status == http.StatusPaymentRequired:
		// A 402 found by reconciling has no type: counted not completed.
		o.status, o.problem = p.Status, p.Type
	case soldOut(err):
		// Nothing was claimed: the key has no answer, and the client
		// moves on.
		o.status, o.problem = http.StatusConflict, "/problems/sold-out"
		c.Keys.Forget(op) //nolint:errcheck // a key left in the file is harmless
		return o
	default:
		// Unsettled, or an answer the transport has already reported
		// (a 500, an unexpected status): left to the completer.
		d.logf("%s (key %s) unresolved: %v", op, e.Key, err)
		return o
	}
	if o.status == http.StatusCreated && rng.Float64() < 0.1 {
		// The transport holds the replay's answer against the first.
		d.mu.Lock()
		d.res.Replays++
		d.mu.Unlock()
		c.MaxElapsed = time.Until(d.giveUp)
		c.PlaceOrder(ctx, op, req) //nolint:errcheck // judged by the transport
	}
	if o.status == http.StatusCreated && twin != nil && rng.Float64() < d.cfg.SharedKeys {
		d.sameKeyOtherCustomer(ctx, c, twin, op, e, req)
	}
	c.Keys.Forget(op) //nolint:errcheck // a key left in the file is harmless
	return o
}

// spread is one client's transport. Each request goes to a shop picked at
// random, as a load balancer spreading requests would; a share (double) of
// the order attempts is fired at two shops at once, as a double click or a
// proxy's retry would, and the client is given the more final of the two
// answers; and every answer is recorded (see saw) before the client reads it.
type spread struct {
	d      *driver
	rng    *rand.Rand // used by the client's goroutine only
	double float64
	// client and customer are whose requests these are, for the history;
	// twin marks a client's second customer (twin.go), whose answers only
	// the history judges.
	client   int
	customer uuid.UUID
	twin     bool
}

// shot is one request sent and its answer, read whole.
type shot struct {
	resp *http.Response
	body []byte
	err  error
	shop string    // the address it was sent to
	sent time.Time // when
	done time.Time // when its answer was read whole, or given up on
}

func (s *spread) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	order := req.Method == http.MethodPost && req.URL.Path == "/api/orders"
	n := 1
	if order && s.rng.Float64() < s.double {
		n = 2
	}
	targets := s.d.cl.targets
	shops := make([]string, n)
	for i := range shops {
		shops[i] = targets[s.rng.IntN(len(targets))]
	}
	shots := make([]shot, n)
	var wg sync.WaitGroup
	for i := range shots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shots[i] = s.send(req, shops[i], body)
		}()
	}
	wg.Wait()
	if order {
		s.d.mu.Lock()
		s.d.res.Attempts += n
		if n == 2 {
			s.d.res.Doubled++
		}
		s.d.mu.Unlock()
	}
	best := 0
	for i, sh := range shots {
		switch {
		case !s.twin:
			s.d.saw(req, sh)
		case sh.resp != nil && sh.resp.StatusCode == http.StatusInternalServerError:
			s.d.count(sh)
			s.d.violate(violServerError, req.Method+" "+req.URL.Path+" (twin)")
		default:
			s.d.count(sh)
		}
		if order {
			s.record(req, sh)
		}
		if rank(sh) > rank(shots[best]) {
			best = i
		}
	}
	for i, sh := range shots {
		if i != best && sh.resp != nil {
			sh.resp.Body.Close()
		}
	}
	return shots[best].resp, shots[best].err
}

// send sends a copy of req to shop and reads the answer whole, so that it
// can be recorded and still be read by the client.
func (s *spread) send(req *http.Request, shop string, body []byte) shot {
	r := req.Clone(req.Context())
	r.URL.Host, r.Host = shop, shop
	r.Body = nil // req's was read; each shot gets its own
	if len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	sent := time.Now()
	resp, err := s.d.base.RoundTrip(r)
	if err != nil {
		return shot{err: err, shop: shop, sent: sent, done: time.Now()}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		// Cut off mid-answer: as good as none.
		return shot{err: err, shop: shop, sent: sent, done: time.Now()}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return shot{resp: resp, body: b, shop: shop, sent: sent, done: time.Now()}
}

// rank orders answers for the client: a final one (2xx or 402), then any
// other, then none.
func rank(sh shot) int {
	switch {
	case sh.resp == nil:
		return 0
	case sh.resp.StatusCode == http.StatusCreated || sh.resp.StatusCode == http.StatusPaymentRequired:
		return 3
	case sh.resp.StatusCode/100 == 2:
		return 2 // a 202: not final, but an answer
	}
	return 1
}

// saw records one answer a client got: its status, a 500 anywhere, and for
// an order, whether the status is one the shop may give and whether it
// agrees with the key's other answers.
func (d *driver) saw(req *http.Request, sh shot) {
	status := 0
	if sh.resp != nil {
		status = sh.resp.StatusCode
	}
	d.count(sh)
	key := strings.Trim(req.Header.Get("Idempotency-Key"), `"`)
	var out struct {
		OrderID uuid.UUID `json:"order_id"`
		Type    string    `json:"type"`
		// ChargeID on a payment-not-completed names the intent the
		// request's own attempt found not charged (requires_action,
		// canceled): its verdict, not the completer's.
		ChargeID string `json:"charge_id"`
	}
	json.Unmarshal(sh.body, &out) //nolint:errcheck // a body that is not JSON leaves them empty
	if status == http.StatusInternalServerError {
		d.violate(violServerError, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", req.Method, req.URL.Path, key, out.Type)))
		return
	}
	if status == http.StatusServiceUnavailable && sh.resp.Header.Get("Retry-After") == "" {
		// An outage's answer says when to come back (issue 19): without
		// it a client can only guess.
		d.violate(violNoRetryAfter, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", req.Method, req.URL.Path, key, out.Type)))
	}
	if req.Method != http.MethodPost || req.URL.Path != "/api/orders" {
		return
	}
	d.mu.Lock()
	now := time.Now()
	d.res.answers = append(d.res.answers, answered{at: now, resp: sh.resp, body: sh.body})
	t := tried{sent: sh.sent, answered: now, shop: sh.shop, status: status, problem: out.Type}
	if sh.err != nil {
		t.err = sh.err.Error()
	}
	d.res.tries[key] = append(d.res.tries[key], t)
	if status == http.StatusCreated {
		d.res.created = append(d.res.created, now)
	}
	d.mu.Unlock()
	// The completer's promise (gracePromised) is about its own verdict;
	// a request that finds its own payment not charged (the provider's
	// requires_action rate) may say so at once.
	if status == http.StatusPaymentRequired && out.Type == notCompleted && out.ChargeID == "" && time.Now().Before(d.giveUp) {
		d.mu.Lock()
		d.res.NotCompletedWhileRetrying++
		if d.cfg.gracePromised() {
			// Judged after the run (check): whether a shop heard the
			// client within the grace before the completer took the key.
			d.res.retried = append(d.res.retried, key)
		}
		d.mu.Unlock()
	}
	switch status {
	case http.StatusCreated, http.StatusPaymentRequired:
		d.final(key, status, out.OrderID, out.Type)
	case 0, http.StatusAccepted, http.StatusConflict, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		// The outcome is unknown or not final (a 202: the card holder is
		// to authenticate at their bank): the client retries.
	default:
		d.violate(violUnexpectedStatus, fmt.Sprintf("key %s: %d %s", key, status, out.Type))
	}
}

// contradiction is a key given two final answers that disagree.
type contradiction struct {
	key         string
	first, then outcome
}

// final holds a final answer for key against the key's first one: one
// order id, and never both a 201 and a 402. A disagreement is kept for
// check, which reports it.
func (d *driver) final(key string, status int, orderID uuid.UUID, problem string) {
	this := outcome{key: key, status: status, orderID: orderID, problem: problem}
	d.mu.Lock()
	defer d.mu.Unlock()
	first, ok := d.seen[key]
	if !ok {
		d.seen[key] = this
		return
	}
	if first.status != status || first.orderID != orderID {
		d.res.contradictions = append(d.res.contradictions, contradiction{key: key, first: first, then: this})
	}
}

// answer is a final answer in a few words.
func (o outcome) answer() string {
	if o.status == http.StatusCreated {
		return fmt.Sprintf("201 %s", o.orderID)
	}
	return fmt.Sprintf("%d %s", o.status, o.problem)
}

// cart is a random order: one to three products, now and then the card the
// provider always declines, or the one whose bank asks for 3-D Secure
// (Config.Authentication), with a return_url.
func (d *driver) cart(rng *rand.Rand) client.OrderRequest {
	var req client.OrderRequest
	for _, i := range rng.Perm(len(d.products))[:1+rng.IntN(min(3, len(d.products)))] {
		req.Items = append(req.Items, client.Item{SKU: d.products[i].SKU, Quantity: 1 + rng.IntN(3)})
	}
	if item, ok := d.lastItem(rng); ok {
		req.Items = append(req.Items, item)
	}
	switch u := rng.Float64(); {
	case u < 0.03:
		req.Card = declinedCard
	case u < 0.03+d.cfg.Authentication:
		req.Card, req.ReturnURL = authenticationCard, returnURL
	}
	return req
}

// cardHolder plays the card holder sent to the bank's page (the fake
// Stripe's) for one 202: now and then late, they complete it once, twice
// at once (a double click), fail it, or never come back (false: the client
// stops asking). Their client then asks again, at once or a while after.
// The page's answers are not judged here: the order's are, by the key's.
func (d *driver) cardHolder(ctx context.Context, page string, rng *rand.Rand) bool {
	if rng.Float64() < 0.3 {
		d.authenticated(func(a *Authentications) { a.Late++ })
		sleep(ctx, time.Duration(rng.Int64N(int64(2*time.Second))))
	}
	decide := func(outcome string) {
		resp, err := d.bank.PostForm(page, url.Values{"outcome": {outcome}})
		if err == nil {
			resp.Body.Close()
		}
	}
	switch u := rng.Float64(); {
	case u < 0.15:
		d.authenticated(func(a *Authentications) { a.Abandoned++ })
		return false
	case u < 0.3:
		d.authenticated(func(a *Authentications) { a.Failed++ })
		decide("fail")
	case u < 0.65:
		d.authenticated(func(a *Authentications) { a.Completed++ })
		decide("complete")
	default:
		d.authenticated(func(a *Authentications) { a.DoubleCompleted++ })
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { decide("complete") })
		}
		wg.Wait()
	}
	if rng.Float64() < 0.3 {
		// The return lost, or a client that looks later: the webhook or
		// the completer may settle the order first.
		d.authenticated(func(a *Authentications) { a.Slow++ })
		sleep(ctx, 2*time.Second)
	}
	return true
}

func (d *driver) authenticated(count func(*Authentications)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	count(&d.res.Authentication)
}

func (d *driver) count(sh shot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	answerCounts{statuses: d.res.Statuses, problems: d.res.Problems}.add(sh.resp, sh.body)
}

func (d *driver) violate(kind, example string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.res.violations = append(d.res.violations, violation{kind: kind, example: example})
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
