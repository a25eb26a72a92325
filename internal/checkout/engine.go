// Package checkout places an order exactly once, however often the request
// that asks for it is retried, double-submitted or raced. Every attempt runs
// through three phases, one file each:
//
//  1. claim.go  — claim the (customer, key) pair, or learn that it is taken,
//     finished (replay), or reused for another request.
//  2. charge.go — pay through a Stripe PaymentIntent: create it with a
//     provider key derived from ours, store its id in the key's row (fenced
//     by the lock token, as the finish is), then confirm it, so the provider
//     turns our own retries into one charge.
//  3. finish.go — write the order and the response to replay in one
//     statement, only if this attempt still holds the key's lock token.
//
// The JSON API and the browser checkout both call Engine.PlaceOrAwait (Place,
// waiting for an attempt that holds the key when the caller asks to); they
// differ only in how they read the request and render the Result. An attempt may
// name the cart version it pays for (cart_claim.go): then a new key is
// claimed only while the cart is open at that version and bound to no other
// key, and the finish closes the cart, so one cart version is charged once.
//
// While the provider call is in flight the attempt renews its lock (lease.go),
// so a slow provider does not let a retry take over a live attempt, and stops
// its own call if it cannot. Keys whose attempts died or stalled are finished
// by the Completer (complete.go), which takes them over the way a retry
// would, settles the operation's PaymentIntent by its id (retrieve, cancel),
// and reuses the same finish.
package checkout

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/payment"
)

// Payments is the part of Stripe's PaymentIntents and refunds the engine
// and the completer use. *payment.Client satisfies it.
type Payments interface {
	CreateIntent(ctx context.Context, req payment.IntentRequest) (payment.Intent, error)
	ConfirmIntent(ctx context.Context, id, idempotencyKey, paymentMethod, returnURL string) (payment.Intent, error)
	RetrieveIntent(ctx context.Context, id string) (payment.Intent, error)
	CancelIntent(ctx context.Context, id, idempotencyKey string) (payment.Intent, error)
	Refund(ctx context.Context, idempotencyKey, intentID string) (payment.Refund, error)
}

// Hooks let tests force an interleaving of concurrent attempts (a barrier in
// a hook) instead of hoping sleeps produce it. Nil hooks are skipped.
type Hooks struct {
	// AfterClaim runs once an attempt owns the key, before it charges.
	AfterClaim func(ctx context.Context, c Claimed)
	// BeforeCharge runs inside the lease, just before the provider calls
	// (the create and confirm, or the completer's retrieve and cancel). Its ctx is the call's: it is
	// cancelled when a renewal finds the lock taken over, or by the fence.
	BeforeCharge func(ctx context.Context, c Claimed)
	// BeforeRenew runs before each renewal of the lock; blocking in it
	// stands for a process too stalled to renew. Its ctx ends when the
	// provider call does.
	BeforeRenew func(ctx context.Context, c Claimed)
	// BeforeFence runs when the lease's fence is about to stop the call
	// because no renewal succeeded in time (see withLease). Blocking in it,
	// together with BeforeRenew, stands for a process so stalled that its
	// timers do not run either.
	BeforeFence func(ctx context.Context, c Claimed)
	// BeforeFinish runs after the provider answered definitely (a charge or
	// a decline), before the finish statement.
	BeforeFinish func(ctx context.Context, c Claimed)
	// BeforeStore runs once the create of the PaymentIntent has answered,
	// before its id is stored: blocking in it (with BeforeRenew and
	// BeforeFence) stands for an attempt that stalls with the create's
	// answer in hand.
	BeforeStore func(ctx context.Context, c Claimed)
	// BeforeConfirm runs once the PaymentIntent's id is stored, just
	// before the confirm: blocking in it stands for an attempt that stalls
	// between the two calls.
	BeforeConfirm func(ctx context.Context, c Claimed)
}

// Claimed describes an attempt that owns its key, for hooks.
type Claimed struct {
	CustomerID uuid.UUID
	Key        string
	// TakenOver is true when the attempt took the key over from an earlier
	// attempt whose lock had expired.
	TakenOver bool
	// ByCompleter is true for the completer's attempts, which always take
	// a key over.
	ByCompleter bool
}

// Config tunes an Engine.
type Config struct {
	// LockTimeout is how long a claim keeps a key before a retry may take
	// it over. Set it above the slowest normal provider call.
	LockTimeout time.Duration
	// FinishTimeout bounds the finish statement, which runs even if the
	// client has gone away (see Place).
	FinishTimeout time.Duration
	// ProviderKeyWindow is how long the payment provider remembers an
	// idempotency key (Stripe: 24 hours; DefaultProviderKeyWindow when
	// zero). A request never resumes a key older than that: resending the
	// create under a key the provider has forgotten would make a second
	// PaymentIntent. Such a key is left to the completer, which settles it
	// by its stored intent, or without a call when none was stored
	// (idem.Options.ResumeWithin).
	ProviderKeyWindow time.Duration
	// AuthenticationWindow is how long an order waits for its shopper to
	// authenticate the payment with their bank (3-D Secure) before the
	// completer cancels its intent (DefaultAuthenticationWindow when zero).
	AuthenticationWindow time.Duration
	// ProviderRetries is how many times an attempt asks the provider again,
	// with the same derived key, after an answer that was lost (a 5xx, a
	// connection that broke or was refused) or a refusal that passes (429,
	// 409, 401), before it gives up and hands the key back (default 2;
	// negative: none). The waits between them start at ProviderBackoff
	// (default 200 ms) and double, with jitter. The provider's idempotency
	// makes each retry return the one charge.
	ProviderRetries int
	ProviderBackoff time.Duration
	Hooks           Hooks
	// Answers, when set, remembers finished order keys in this process so
	// that replays skip the database (idem.Options.Answers); nil remembers
	// nothing.
	Answers idem.Answers
	// AnswersFor is how long Answers keeps an entry, and KeyRetention how
	// long finished keys are kept: a key is remembered only while its entry
	// cannot outlive its row (idem.Options.AnswersFor).
	AnswersFor, KeyRetention time.Duration
	// Metrics receives the engine's counters; nil counts into a registry
	// nobody reads.
	Metrics *metrics.Metrics
	// Log receives claim outcomes and lost locks; nil discards them.
	Log *slog.Logger
	// Tracing makes the engine's spans (tracing.go); nil makes none.
	Tracing trace.TracerProvider
}

// DefaultAuthenticationWindow is how long an order waits for its shopper's
// 3-D Secure: Stripe's own challenge pages time out within minutes, and a
// shopper who has not come back by then has abandoned the payment.
const DefaultAuthenticationWindow = 15 * time.Minute

// DefaultProviderKeyWindow is how long Stripe keeps an idempotency key. The
// fake keeps them for ever, but the engine behaves as Stripe demands.
const DefaultProviderKeyWindow = 24 * time.Hour

// KeyKind is the kind of the order keys in the kit's table (idem.Options.Kind):
// the order completer and sweeper take only these.
const KeyKind = "order"

// Keys is the kit's store of the order keys, for whoever must ask about a
// key without placing an order: the write limits, which admit a retry of a
// key that exists, and record the ask of one they refuse.
func (e *Engine) Keys() *idem.Store { return e.keys }

// Engine runs the order flow. It is safe for concurrent use.
type Engine struct {
	db       *database.DB
	keys     *idem.Store
	catalog  *catalog.Catalog
	payments Payments
	cfg      Config
	metrics  *metrics.Metrics
	log      *slog.Logger
	tracer   trace.Tracer
	// finish writes the order and the key's response. It is a field only so
	// that mutation tests can swap in a finish with a guard removed and show
	// what each guard buys (export_test.go).
	finish finishFunc

	// waiters caps the callers waiting per key (waiters.go).
	waiters keyWaiters

	// abandoned is closed by Abandon; attempts in flight watch it.
	abandoned   chan struct{}
	abandonOnce sync.Once
}

// New returns an engine.
func New(d *database.DB, cat *catalog.Catalog, payments Payments, cfg Config) *Engine {
	mutate(&cfg, nil)
	if cfg.FinishTimeout == 0 {
		cfg.FinishTimeout = 10 * time.Second
	}
	if cfg.ProviderKeyWindow == 0 {
		cfg.ProviderKeyWindow = DefaultProviderKeyWindow
	}
	if cfg.AuthenticationWindow == 0 {
		cfg.AuthenticationWindow = DefaultAuthenticationWindow
	}
	if cfg.ProviderRetries == 0 {
		cfg.ProviderRetries = defaultProviderRetries
	}
	if cfg.ProviderBackoff <= 0 {
		cfg.ProviderBackoff = defaultProviderBackoff
	}
	e := &Engine{
		db: d, catalog: cat, payments: payments, cfg: cfg,
		// The order keys live in the kit's store; a claim never resumes a
		// key the provider may have forgotten (see ProviderKeyWindow), and
		// every takeover is on the key's trail (recordTakeover).
		keys: idem.NewStore(d.Pool, idem.Options{Kind: KeyKind, Lease: cfg.LockTimeout, ResumeWithin: cfg.ProviderKeyWindow,
			Answers: cfg.Answers, AnswersFor: cfg.AnswersFor, Retention: cfg.KeyRetention, TookOver: recordTakeover}),
		metrics: cfg.Metrics, log: cfg.Log, abandoned: make(chan struct{}),
	}
	if e.metrics == nil {
		e.metrics = metrics.New()
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.tracer = noTracer(); cfg.Tracing != nil {
		e.tracer = cfg.Tracing.Tracer(tracerName)
	}
	e.finish = e.guardedFinish
	mutate(nil, e)
	return e
}

// Abandon makes every attempt in flight stop at once, wherever it is, and
// every later one fail with ErrAbandoned. Their keys stay started, locked
// until their lease runs out; the completer or a retry resolves them then.
// Shutdown calls it when in-flight requests outlive the grace period: a
// process that is going away must not leave work running that nothing will
// wait for.
func (e *Engine) Abandon() {
	e.abandonOnce.Do(func() { close(e.abandoned) })
}

// LockTimeout is the default time a claim holds a key.
func (e *Engine) LockTimeout() time.Duration { return e.cfg.LockTimeout }
