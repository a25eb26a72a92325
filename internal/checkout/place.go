package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/tracing"
)

const (
	// MaxWait is the longest PlaceOrAwait keeps a caller waiting for the
	// attempt that holds its key. It covers a usual provider call, so the
	// second submit of a double-click ends on the receipt with no page in
	// between, and stays far below what a browser or a proxy gives a request.
	MaxWait = 3 * time.Second
	// ClaimTimeout bounds what a waiting caller's attempt does before it
	// owns its key (pricing and the claim), which PlaceOrAwait runs detached
	// from the caller's cancellation.
	ClaimTimeout = 15 * time.Second
)

// PlaceOrAwait is Place for a caller that would rather wait for the attempt
// holding its key than be told it is held: the second submit of a
// double-click, or an API client that asked to wait (Prefer: wait). When
// another attempt holds the key (*InProgressError, or ErrLockLost: a newer
// one took it over from this one) it waits, with the kit's one wait loop,
// until that attempt has finished or let its lock expire, and places again:
// the result is then the other attempt's, Replayed and Joined. It gives up
// after wait (at most MaxWait) with the error it last met (the key's
// *InProgressError, whose RetryAfter says when to ask again, or
// ErrLockLost); with wait zero it is Place.
//
// A caller that waits has its attempts detached from its own cancellation,
// bounded by ClaimTimeout beyond the wait, until one owns the key (Place
// detaches it from then on): a browser drops the first request of a
// double-click for the second, and the first must still claim its key and
// go on, or the second would find the key claimed by an attempt that
// stopped, and wait out its lock. Only
// maxWaiters callers wait per key at once; past that a caller is answered
// at once, so that a flood of one request (a stuck key, a script) cannot
// hold a goroutine and a database poll per request.
func (e *Engine) PlaceOrAwait(ctx context.Context, a Attempt, wait time.Duration) (Result, error) {
	wait = min(wait, MaxWait)
	deadline := time.Now().Add(wait)
	// The wait ends with the caller; the attempts do not (see above).
	waiting := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), wait+ClaimTimeout)
		defer cancel()
	}
	var leave func()
	for {
		res, err := e.Place(ctx, a)
		held := errors.Is(err, ErrLockLost) || errors.Is(err, idem.ErrInProgress)
		if !held || wait <= 0 {
			res.Joined = leave != nil && err == nil
			return res, err
		}
		if leave == nil {
			var ok bool
			if leave, ok = e.joinWaiters(a); !ok {
				return Result{}, err
			}
			defer leave()
		}
		if !e.Await(waiting, a.CustomerID, a.Key, deadline) {
			return Result{}, err
		}
	}
}

// Await waits until the attempt holding the key has finished or let its
// lock expire — the moment to call Place again — and reports true, or
// false when the deadline passes or ctx ends first. It waits with the kit's
// one wait loop (idem.Poll).
func (e *Engine) Await(ctx context.Context, customer uuid.UUID, key string, deadline time.Time) bool {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := idem.Poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := e.keys.Get(ctx, customer.String(), key)
		if ctx.Err() != nil {
			// The wait is over (Poll returns ctx's error), whatever the
			// read said: a deadline that passed before the first read must
			// not count as "stopped holding", or a caller that loops on
			// Place and Await would spin until the lock runs out.
			return false, nil
		}
		// Finished, gone, or no longer held (its lease ran out): the
		// moment to place again. An error is for Place to meet and report.
		busy, held := errors.AsType[*idem.InProgressError](err)
		return !held || !busy.Held, nil
	})
	return err == nil
}

// Place runs one attempt of an order through claim, charge and finish.
//
// It returns a Result for every outcome that is stored and replayed (a placed
// order, a declined card), and an error for every outcome that is not:
// *InvalidOrderError, ErrKeyReused, *InProgressError, ErrLockLost,
// *OutcomeUnknownError, *AbandonedError, or an unexpected failure. None of those
// errors stores anything, so the same key can be retried.
func (e *Engine) Place(ctx context.Context, a Attempt) (Result, error) {
	select {
	case <-e.abandoned:
		// Claiming now would only leave one more key for the completer.
		return Result{}, &AbandonedError{RetryAfter: time.Second}
	default:
	}
	if d, ok := ctx.Value(lockForKey{}).(time.Duration); ok && a.LockFor <= 0 {
		a.LockFor = d
	}
	if a.LockFor <= 0 {
		a.LockFor = e.cfg.LockTimeout
	}
	// The span of whoever places the order, the request's, names the key:
	// a collector finds the request by it, the /traces page lists it
	// under the key.
	trace.SpanFromContext(ctx).SetAttributes(tracing.KeyAttributes(a.CustomerID.String(), a.Key)...)
	// Validate and price before claiming: a bad request must not consume
	// the key, so the client can fix it and resend with the same key. An
	// order refused now (it cannot be priced today, or not at the amount
	// shown) may still be a key in use: its answer, or its operation, must
	// not depend on today's catalog, so the claim asks the key before the
	// refusal is the answer (see claimKey).
	priced, refusal := e.price(ctx, a)
	card, why := checkCard(a.Order.Card)
	if why != "" {
		return Result{}, invalidCard(priced, refusal, why)
	}
	a.Order.Card = card
	c, replay, err := e.claimKey(ctx, a, priced, refusal)
	if err != nil {
		return Result{}, err
	}
	if replay != nil {
		return *replay, nil
	}
	if c.resumed != nil {
		priced = *c.resumed
	}
	if c.lock.TakenOver {
		if err := e.loadIntent(ctx, a.CustomerID, &c); err != nil {
			return Result{}, err
		}
	}
	claimed := Claimed{CustomerID: a.CustomerID, Key: a.Key, TakenOver: c.lock.TakenOver}
	if h := e.cfg.Hooks.AfterClaim; h != nil {
		h(ctx, claimed)
	}

	// This attempt owns the key now. If the client hangs up, finishing is
	// still better than leaving a charge without its order, so the rest is
	// detached from the request's cancellation; the provider client and
	// FinishTimeout bound it instead, and only a shutdown cuts it short.
	ctx, cancel := e.detach(ctx)
	defer cancel(nil)
	res, err := e.chargeAndFinish(ctx, a, c, claimed, priced)
	if err != nil && errors.Is(context.Cause(ctx), ErrAbandoned) {
		// Another instance may be serving the client's retry already.
		return Result{}, &AbandonedError{RetryAfter: e.handBack(context.WithoutCancel(ctx), a, c)}
	}
	return res, err
}

// price prices the order once, here, and this is the price charged: a
// catalog change between a page and its submit can refuse the order but
// never charge an amount the page did not show. Its error is the order's
// refusal: an *InvalidOrderError for an order the catalog cannot price, a
// *PriceChangedError for one that does not cost the amount the client
// expects, or the catalog's failure.
func (e *Engine) price(ctx context.Context, a Attempt) (catalog.Priced, error) {
	priced, err := e.catalog.Price(ctx, a.Order.Items)
	var invalid *catalog.InvalidCartError
	switch {
	case errors.As(err, &invalid):
		return priced, &InvalidOrderError{Reason: invalid.Reason, Pointer: invalid.Pointer}
	case err != nil:
		return priced, err
	case a.ExpectedAmount != 0 && a.ExpectedAmount != priced.Amount:
		return priced, &PriceChangedError{Priced: priced}
	}
	return priced, nil
}

// invalidCard is the answer to an order whose card number is not one: the
// card's *InvalidOrderError, with the order as priced so that a form can be
// shown again, unless the order could not be priced at all.
func invalidCard(priced catalog.Priced, refusal error, reason string) error {
	var changed *PriceChangedError
	if refusal != nil && !errors.As(refusal, &changed) {
		return refusal
	}
	return &InvalidOrderError{Reason: reason, Pointer: "/card", Card: true, CheckDigit: reason == cardCheckReason, Priced: priced}
}

// ErrNoSuchKey means the customer has no such key.
var ErrNoSuchKey = errors.New("no such key")

// KeyState is what became of a key: its stored outcome once finished,
// else whether an attempt still holds its lock.
type KeyState struct {
	Finished bool
	Result   Result // the stored outcome, Replayed, when Finished
	Held     bool   // an attempt holds the lock (by the database clock)
	// AuthenticateURL, for a started key whose shopper was sent to their
	// bank (3-D Secure) and may still go there, is the bank's page.
	AuthenticateURL string
}

// State reads the customer's key, for a page that shows how an order is
// going. ErrNoSuchKey when there is none.
func (e *Engine) State(ctx context.Context, customer uuid.UUID, key string) (KeyState, error) {
	resp, err := e.keys.Get(ctx, customer.String(), key)
	var busy *idem.InProgressError
	switch {
	case errors.Is(err, idem.ErrNotFound):
		return KeyState{}, ErrNoSuchKey
	case errors.As(err, &busy):
		st := KeyState{Held: busy.Held}
		row, err := e.db.KeyIntent(ctx, db.KeyIntentParams{CustomerID: customer, Key: key})
		if err != nil {
			return KeyState{}, fmt.Errorf("read key's payment: %w", err)
		}
		if row.AwaitingSeconds >= 0 && row.AwaitingSeconds < e.cfg.AuthenticationWindow.Seconds() {
			st.AuthenticateURL = row.AuthenticateUrl
		}
		return st, nil
	case err != nil:
		return KeyState{}, fmt.Errorf("read key: %w", database.Translate(err))
	}
	return KeyState{Finished: true, Result: Result{Status: resp.Status, Body: resp.Body, Replayed: true}}, nil
}

// KeyInUse reports whether the customer's key has been claimed: a check a
// request makes before refusing a new order for a precondition (a cart
// version), which must not refuse a retry of one in use. That retry is
// judged by what its key was claimed for. It asks the kit (idem.Store.Get),
// which answers for a key whether it is finished or started.
func (e *Engine) KeyInUse(ctx context.Context, customer uuid.UUID, key string) (bool, error) {
	_, err := e.keys.Get(ctx, customer.String(), key)
	switch {
	case errors.Is(err, idem.ErrNotFound):
		return false, nil
	case err == nil, errors.Is(err, idem.ErrInProgress):
		return true, nil
	}
	return false, fmt.Errorf("read key: %w", database.Translate(err))
}

// chargeAndFinish is phases 2 and 3 of an attempt that owns its key.
func (e *Engine) chargeAndFinish(ctx context.Context, a Attempt, c claim, claimed Claimed, priced catalog.Priced) (Result, error) {
	var in payment.Intent
	err := e.withLease(ctx, c, claimed, func(ctx context.Context) error {
		if h := e.cfg.Hooks.BeforeCharge; h != nil {
			h(ctx, claimed)
		}
		var err error
		in, err = e.payRetried(ctx, a, &c, priced)
		return err
	})
	var (
		declined *payment.DeclinedError
		unknown  *OutcomeUnknownError
		authn    *authenticationError
	)
	canceled := errors.Is(err, payment.ErrCanceled)
	switch {
	case errors.As(err, &authn):
		return Result{}, e.awaitAuthentication(ctx, a, c, authn)
	case errors.Is(err, ErrLeaseLapsing):
		// The outcome is unknown, as after a timeout; the key stays started.
		return Result{}, &OutcomeUnknownError{Reason: payment.ReasonTimeout, RetryAfter: a.LockFor - FenceAt(a.LockFor), Err: err}
	case errors.As(err, &unknown):
		unknown.RetryAfter = e.handBack(ctx, a, c)
		return Result{}, err
	case err != nil && !canceled && !errors.As(err, &declined):
		return Result{}, err
	}
	if h := e.cfg.Hooks.BeforeFinish; h != nil {
		h(ctx, claimed)
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.FinishTimeout)
	defer cancel()
	var notCharged *notChargedError
	switch {
	case errors.As(err, &notCharged):
		// The confirm left the intent in a status that is no charge
		// (requires_action for a request with no return_url, which has
		// nowhere to send the card holder; or an authentication awaited
		// past its window), and this attempt canceled it: settled as not
		// charged, finally.
		return e.finishNotCompleted(ctx, a, c, notCharged.detail(), notCharged.IntentID)
	case canceled:
		// The completer canceled the operation at the provider: nothing
		// was or will be charged under it. Usually the completer holds the
		// key and has stored that answer, and this finish loses; if this
		// attempt took the key back meanwhile, it stores the same answer.
		return e.finishNotCompleted(ctx, a, c, "", "")
	case declined != nil:
		return e.finishDeclined(ctx, a, c, declined)
	case in.Status != payment.StatusSucceeded:
		// pay returns a succeeded intent or an error: anything else is
		// a bug, and never an order.
		return Result{}, fmt.Errorf("payment intent %s is %s after its confirm, not succeeded", in.ID, in.Status)
	case !sameMoney(in, priced):
		return e.finishMismatch(ctx, e.payments, a, c, priced, in)
	}
	return e.finishOrder(ctx, a, c, priced, in)
}

// FenceAt is how long after its lock was last taken or renewed an attempt
// stops its own provider call if no renewal has succeeded since: the kit's
// fence (idem.FenceAt), three quarters of the lock timeout. config checks
// that a normal provider call (PROVIDER_TIMEOUT) fits in that time.
func FenceAt(lockFor time.Duration) time.Duration { return idem.FenceAt(lockFor) }

// withLease runs call, the provider call, under the kit's lease keeper
// (idem.Lock.KeepWith, the kit's heartbeat with hooks): every
// third of the lock timeout it extends the lease, but only while the key
// still carries this attempt's token. A lock shorter than a slow provider
// call would otherwise let a retry take over a live attempt. What is about
// orders here is only the hooks, the metrics and the log lines.
//
// When a renewal finds the token gone, a newer attempt owns the operation:
// call's context is cancelled and withLease returns ErrLockLost. When
// renewals fail (the database is slow or unreachable, or the heartbeat
// itself is stalled), the keeper's fence cancels the call FenceAt after the
// lock was last known to be taken, and withLease returns ErrLeaseLapsing. A
// call that has already reached the provider may still be processed there;
// what makes that harmless is that the completer cancels at the provider
// before concluding "no charge".
func (e *Engine) withLease(ctx context.Context, c claim, who Claimed, call func(ctx context.Context) error) error {
	hooks := idem.LeaseHooks{
		Renewed: func(ctx context.Context, err error) {
			switch {
			case errors.Is(err, ErrLockLost):
				e.metrics.LeaseRenewals.WithLabelValues("lost").Inc()
				e.log.WarnContext(ctx, "lock lost to a newer attempt during the provider call; stopping",
					logging.Key(who.Key), "customer_id", who.CustomerID, "completer", who.ByCompleter)
			case err != nil:
				e.metrics.LeaseRenewals.WithLabelValues("error").Inc()
				e.log.WarnContext(ctx, "renew lock", logging.Key(who.Key), "err", err)
			default:
				e.metrics.LeaseRenewals.WithLabelValues("renewed").Inc()
			}
		},
	}
	if h := e.cfg.Hooks.BeforeRenew; h != nil {
		hooks.BeforeRenew = func(ctx context.Context) { h(ctx, who) }
	}
	if h := e.cfg.Hooks.BeforeFence; h != nil {
		hooks.BeforeFence = func(ctx context.Context) { h(ctx, who) }
	}
	held, stop := c.lock.KeepWith(ctx, hooks)
	err := call(held)
	switch cause := stop(); {
	case errors.Is(cause, ErrLockLost):
		return ErrLockLost
	case errors.Is(cause, ErrLeaseLapsing) && err != nil:
		// (A call that returned an answer before the fence fired keeps it:
		// the lock is still this attempt's, so it may finish.)
		e.metrics.LeaseRenewals.WithLabelValues("fenced").Inc()
		e.log.WarnContext(ctx, "lock could not be renewed; provider call stopped before the lock ran out",
			logging.Key(who.Key), "customer_id", who.CustomerID, "completer", who.ByCompleter)
		return ErrLeaseLapsing
	}
	return err
}

// awaitAuthentication leaves the key started for the shopper's trip to
// their bank (3-D Secure): it records, fenced by this attempt's lock token,
// that the operation waits for the shopper and where they authenticate,
// hands the key back (its lease ends, so that a retry of the same form
// takes it over at once and is sent to the bank again: the confirm's
// replay says the same), and tells the caller where to send the shopper.
// Nothing is stored as the key's answer. Whatever comes first then settles
// the key under a lock of its own, by the intent as the provider has it:
// the shopper back on the return route or the provider's webhook
// (Completer.SettleKey), a retry, or the completer, which cancels an
// intent still waiting past the authentication window.
func (e *Engine) awaitAuthentication(ctx context.Context, a Attempt, c claim, authn *authenticationError) error {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.FinishTimeout)
	defer cancel()
	_, err := e.db.AwaitAuthentication(ctx, db.AwaitAuthenticationParams{CustomerID: a.CustomerID, Key: a.Key,
		LockToken: c.token(), AuthenticateUrl: authn.URL})
	switch {
	case errors.Is(err, database.ErrNotFound):
		// Taken over meanwhile: the newer holder decides, and the retry
		// learns what from it.
		return ErrLockLost
	case err != nil:
		return fmt.Errorf("record the wait for authentication: %w", err)
	}
	e.recordEvent(ctx, a.CustomerID, a.Key, "awaiting_authentication", map[string]any{"payment_intent": authn.IntentID})
	e.handBack(ctx, a, c)
	return &AuthenticationRequiredError{IntentID: authn.IntentID, URL: authn.URL}
}

// handBackRetryAfter is what a client is told to wait after an attempt
// handed its key back: a retry then takes the key over at once.
const handBackRetryAfter = 2 * time.Second

// handBack ends the lease of an attempt that stopped without knowing what
// the provider did (its answer lost, no answer in time, even after the
// retries), so that the client's retry takes the key over at once and asks
// the provider again with the same derived key, instead of being told to
// wait (409) until the lease runs out. It returns the Retry-After to give
// the client: short when the key was handed back, the lease when it could
// not be (the database did not answer), as before.
func (e *Engine) handBack(ctx context.Context, a Attempt, c claim) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, min(e.cfg.FinishTimeout, 2*time.Second))
	defer cancel()
	if err := c.lock.Expire(ctx); err != nil {
		e.log.WarnContext(ctx, "hand key back after an unknown provider outcome", logging.Key(a.Key), "err", err)
		return a.LockFor
	}
	return handBackRetryAfter
}

// detach returns a context that keeps ctx's values (the request id) but not
// its cancellation, and that Abandon cancels with ErrAbandoned.
func (e *Engine) detach(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-e.abandoned:
			cancel(ErrAbandoned)
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
