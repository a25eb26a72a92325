package checkout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/tracing"
)

// claim is this attempt's hold on a key: the kit's lock, and what the order
// flow needs besides.
type claim struct {
	lock *idem.Lock
	// operation is the key's operation id (lock.OperationID), and
	// providerKey the key derived from it for the provider (ProviderKey).
	// The operation lives only in the key row: a row lost after its
	// attempt charged (a failover to an asynchronous replica, a restore)
	// makes the next retry a new operation with a new provider key, and so
	// a second charge. The key table needs synchronous durability.
	operation   uuid.UUID
	providerKey string
	// resumed is the order as priced when the key was first claimed, set on
	// a takeover: the operation resumes with the amount the first attempt
	// may already have charged, even if prices have changed since.
	resumed *catalog.Priced
	// intentID is the operation's PaymentIntent once its id is stored in
	// the key's row (StoreIntent), read on a takeover (loadIntent); age is
	// the key's age then, by the database's clock.
	intentID string
	age      time.Duration
	// claimTrace is the traceparent of the key's claim, read with the
	// intent, for the completer's link to it ("" when untraced).
	claimTrace string
	// awaited says the operation waits for its shopper to authenticate the
	// payment with their bank (3-D Secure), and awaiting for how long by
	// the database's clock; read with the intent.
	awaited  bool
	awaiting time.Duration
}

// loadIntent reads the PaymentIntent stored for a key taken over, and the
// key's age: a takeover confirms a stored intent by its id, and creates
// one (the same create, replayed) only when none was stored.
func (e *Engine) loadIntent(ctx context.Context, customer uuid.UUID, c *claim) error {
	row, err := e.db.KeyIntent(ctx, db.KeyIntentParams{CustomerID: customer, Key: c.lock.Key})
	if err != nil {
		return fmt.Errorf("read payment intent: %w", err)
	}
	c.intentID, c.age = row.PaymentIntentID, time.Duration(row.AgeSeconds*float64(time.Second))
	c.claimTrace = row.ClaimTraceparent
	c.awaited, c.awaiting = row.AwaitingSeconds >= 0, time.Duration(row.AwaitingSeconds*float64(time.Second))
	return nil
}

// byCompleter tells the completer's claims: their finishes are recorded as
// "recovered" and their losses counted apart.
func (c claim) byCompleter() bool { return c.lock.ByCompleter }

// holder names who holds the claim, for metrics.
func (c claim) holder() string {
	if c.byCompleter() {
		return metrics.HolderCompleter
	}
	return metrics.HolderRequest
}

// token is the lock token, in the type the shop's statements take.
func (c claim) token() uuid.UUID { return uuid.MustParse(c.lock.Token) }

// claimKey is phase 1. It returns a claim when this attempt now owns the
// key, or a Result to replay, or one of ErrKeyReused and *InProgressError.
//
// A new key costs one statement, ClaimOrderKey: the kit's claim
// (idem_claim, of the kit's SQL contract) with the priced order the
// completer needs, the provider key and, for a cart version, the binding of
// the version to the key. The kit runs it (idem.Store.ClaimWith) and judges
// a key that existed, which the
// same statement reports: a replay, a reused key or one in progress is
// answered from that unlocked read, since a fingerprint never changes and
// an answer is final; a takeover goes through the kit's locked path. A key
// this process has seen finished is answered from memory first
// (Config.Answers), in no round trip.
//
// An order refused before its claim (refusal: it cannot be priced today, or
// not at the amount the client showed) inserts nothing, but a key already
// claimed for this very request still answers: a finished one replays what
// it stored, and a started one, which may have charged already, is
// answered as any claim would be (409 while its lock is held, a takeover
// that resumes with the stored request once it expired). Only when there
// is no such key is the refusal the answer: nothing was claimed, so nothing
// was charged.
func (e *Engine) claimKey(ctx context.Context, a Attempt, priced catalog.Priced, refusal error) (c claim, replay *Result, err error) {
	ctx, span := e.tracer.Start(ctx, spanClaim)
	var run idem.ClaimStatement
	if refusal == nil {
		run = func(ctx context.Context, operation, token string) (bool, idem.Key, error) {
			return e.claimStatement(ctx, a, priced, operation, token)
		}
	}
	kc, err := e.keys.ClaimWith(ctx, idem.Request{Scope: a.CustomerID.String(), Key: a.Key,
		Fingerprint: a.Fingerprint, Lease: a.LockFor}, run)
	c, replay, err = e.claimed(a, kc, err, refusal)
	e.endClaim(ctx, span, a, c, replay, err)
	return c, replay, err
}

// claimStatement is ClaimOrderKey, the statement the kit runs to claim a
// new key (an idem.ClaimStatement).
func (e *Engine) claimStatement(ctx context.Context, a Attempt, priced catalog.Priced, operation, token string) (bool, idem.Key, error) {
	request, err := encodeRequest(priced)
	if err != nil {
		return false, idem.Key{}, err
	}
	op := uuid.MustParse(operation)
	p := db.ClaimOrderKeyParams{
		CustomerID: a.CustomerID, Key: a.Key, Fingerprint: a.Fingerprint, Lease: a.LockFor,
		Request: request, OperationID: op, LockToken: uuid.MustParse(token),
		ProviderKey: ProviderKey(a.CustomerID, a.Key, op), Kind: KeyKind,
	}
	if tp := tracing.Traceparent(ctx); tp != "" {
		// On the "claimed" event: the completer's pass over this key, a
		// trace of its own, links back to the claim's.
		p.Traceparent = &tp
	}
	if a.Cart != nil {
		p.CartID, p.CartVersion = &a.Cart.ID, &a.Cart.Version
	}
	row, err := e.db.ClaimOrderKey(ctx, p)
	switch {
	case errors.Is(err, database.ErrNotFound) && a.Cart != nil:
		// The cart refused the key, or a concurrent attempt inserted
		// it after this statement's snapshot: the cart tells which.
		if err := e.cartRefusal(ctx, a); err != nil {
			return false, idem.Key{}, err
		}
		return false, idem.Key{}, idem.ErrNotFound
	case errors.Is(err, database.ErrNotFound):
		return false, idem.Key{}, idem.ErrNotFound
	case errors.Is(err, database.ErrSoldOut):
		// Nothing was claimed: the statement failed as a whole.
		return false, idem.Key{}, e.soldOut(ctx, priced)
	case err != nil:
		return false, idem.Key{}, fmt.Errorf("claim key: %w", err)
	case row.Inserted:
		return true, idem.Key{}, nil
	}
	k, err := idem.KeyRow{Fingerprint: row.Fingerprint, Status: row.Status, LeaseLeftSeconds: row.LeaseLeftSeconds,
		AgeSeconds: row.AgeSeconds, ResponseStatus: row.ResponseStatus, ResponseBody: row.ResponseBody}.Key()
	return false, k, err
}

// claimed turns the kit's answer to a claim into the order flow's: a
// replayed Result, ErrKeyReused, an *InProgressError, or a claim of the key,
// new or taken over from an attempt whose lease ran out, which resumes the
// order it was claimed for. A refused request (see claimKey) that found no
// key of its own is answered with its refusal.
func (e *Engine) claimed(a Attempt, kc idem.Claim, err, refusal error) (claim, *Result, error) {
	err = database.Translate(err)
	switch {
	case refusal != nil && (errors.Is(err, idem.ErrNotFound) || errors.Is(err, idem.ErrMismatch)):
		return claim{}, nil, refusal
	case errors.Is(err, idem.ErrMismatch):
		return claim{}, nil, ErrKeyReused
	case errors.Is(err, idem.ErrInProgress):
		return claim{}, nil, err
	case err != nil:
		return claim{}, nil, fmt.Errorf("claim key: %w", err)
	case kc.Replay != nil:
		return claim{}, &Result{Status: kc.Replay.Status, Body: kc.Replay.Body, Replayed: true}, nil
	}
	c, err := claimOf(a.CustomerID, kc.Lock)
	if err == nil && refusal != nil && c.resumed == nil {
		// A key claimed before requests were stored with their keys: it
		// cannot be resumed without pricing it, so it is left to the
		// completer (in practice such keys are past the provider's window).
		return claim{}, nil, &InProgressError{RetryAfter: a.LockFor}
	}
	return c, nil, err
}

// claimOf is the order flow's claim of the key l holds for customer; a key
// taken over (by a retry or the completer) resumes the order it was first
// claimed for.
func claimOf(customer uuid.UUID, l *idem.Lock) (claim, error) {
	operation, err := uuid.Parse(l.OperationID)
	if err != nil {
		return claim{}, fmt.Errorf("operation id: %w", err)
	}
	c := claim{lock: l, operation: operation, providerKey: ProviderKey(customer, l.Key, operation)}
	if l.TakenOver && l.Payload != nil {
		priced, err := decodeRequest(l.Payload)
		if err != nil {
			return c, err
		}
		c.resumed = &priced
	}
	return c, nil
}

// ProviderKey derives the idempotency key sent to the payment provider from
// ours. Every attempt of one operation — the original, a retry that took it
// over, the background completer — derives the same key, so the provider
// turns them all into one charge. Hashing keeps the client's key, which we
// do not control, out of a third party's logs and within its length limit.
//
// operation is the key's operation id, new each time the key is created:
// once a key has expired and is used again it is a new operation, and must
// not be answered with the old operation's charge. The nil UUID (keys
// claimed before operation ids existed) derives the key those were charged
// with.
func ProviderKey(customerID uuid.UUID, key string, operation uuid.UUID) string {
	material := customerID.String() + "\x00" + key
	if operation != uuid.Nil {
		material += "\x00" + operation.String()
	}
	sum := sha256.Sum256([]byte(material))
	return "order_" + hex.EncodeToString(sum[:])
}

// storedRequest is what a claim stores with the key so that the completer
// can write the order if the attempt dies after charging: the priced lines,
// not the cart, because the order must say what was charged even if prices
// change before the completer runs. The card number is not part of it.
type storedRequest struct {
	Lines    []catalog.Line `json:"lines"`
	Amount   int64          `json:"amount"`
	Currency string         `json:"currency"`
}

func encodeRequest(p catalog.Priced) (json.RawMessage, error) {
	b, err := json.Marshal(storedRequest{Lines: p.Lines, Amount: p.Amount, Currency: p.Currency})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b, nil
}

func decodeRequest(b json.RawMessage) (catalog.Priced, error) {
	var r storedRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return catalog.Priced{}, fmt.Errorf("decode stored request: %w", err)
	}
	return catalog.Priced{Lines: r.Lines, Amount: r.Amount, Currency: r.Currency}, nil
}

// claimOutcome names what a claim came to, the claims metric's outcome
// label, with the level its log line is written at; "" for a claim that
// came to nothing (the database failed, or the order was refused).
func claimOutcome(c claim, replay *Result, err error) (string, slog.Level) {
	var inProgress *InProgressError
	switch {
	case errors.Is(err, ErrKeyReused):
		return metrics.ClaimMismatch, slog.LevelInfo
	case errors.As(err, &inProgress):
		return metrics.ClaimConflict, slog.LevelDebug
	case err != nil:
		return "", 0
	case replay != nil:
		return metrics.ClaimReplay, slog.LevelDebug
	case c.lock.TakenOver:
		// The takeover's transaction wrote its audit event
		// (recordTakeover, the kit's TookOver hook).
		return metrics.ClaimTakeover, slog.LevelInfo
	}
	return metrics.ClaimNew, slog.LevelDebug
}

// endClaim records what a claim came to, in the metrics, the log and the
// claim's span, and ends the span. A refusal the claim makes (a reused key,
// one in progress) is its answer, not a failure.
func (e *Engine) endClaim(ctx context.Context, span trace.Span, a Attempt, c claim, replay *Result, err error) {
	outcome, level := claimOutcome(c, replay, err)
	if outcome != "" {
		e.metrics.Claims.WithLabelValues(outcome).Inc()
		e.log.Log(ctx, level, "claim", "outcome", outcome, logging.Key(a.Key), "customer_id", a.CustomerID)
		span.SetAttributes(attrOutcome.String(outcome))
		err = nil
	}
	tracing.End(span, err)
}
