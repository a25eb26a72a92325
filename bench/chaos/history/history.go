// Package history records what the chaos run's clients saw and what the
// provider and the shop's database hold at its end, and checks that record
// for the anomalies of exactly-once charging (check.go): a key with two
// different successes, a replay that differs from the original by a byte,
// a success acknowledged and later lost, a 409 or 202 after a success, a
// success whose charge was refunded, an order without its charge or a
// charge without its order.
//
// The record is the evidence, apart from the harness's own invariants
// (package chaos, check.go there): it is written to history.json beside
// the run's logs, and the checker runs over the file alone, so that a
// failing run can be checked again, or by someone else, without the run.
// docs/analysis.md says why each check is where it is.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// The kinds of operation a history holds besides orders (Op.Kind ""): a
// customer's cancel through the API, and an operator's refund through the
// admin listener (issue 40). Each key is a register of its own, as an
// order's is (model.go).
const (
	KindCancel = "cancel"
	KindRefund = "refund"
)

// Op is one order request as its client saw it: sent at Call, its answer
// read whole (or given up on) at Return, both in nanoseconds from the
// start of the drive on the harness's one monotonic clock.
type Op struct {
	Client int `json:"client"`
	// Kind is "" for an order, KindCancel or KindRefund. An operator's
	// refund key's Customer is "operator", its scope.
	Kind     string `json:"kind,omitempty"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	Call     int64  `json:"call"`
	Return   int64  `json:"return"`
	// Status is 0 for no answer (refused, reset, timed out).
	Status int `json:"status"`
	// Problem is a problem+json answer's type; BodyHash the SHA-256 of the
	// body as it came, in hex (empty for no answer); OrderID and ChargeID
	// what the body names.
	Problem  string `json:"problem,omitempty"`
	BodyHash string `json:"body_hash,omitempty"`
	OrderID  string `json:"order_id,omitempty"`
	ChargeID string `json:"charge_id,omitempty"`
	// RefundID is a cancel's 201 refund; Location an operator refund's
	// 303, which names the order and how the refund ended.
	RefundID string `json:"refund_id,omitempty"`
	Location string `json:"location,omitempty"`
	// Replayed is the answer's Idempotent-Replayed header.
	Replayed bool   `json:"replayed,omitempty"`
	Shop     string `json:"shop,omitempty"`
	Err      string `json:"err,omitempty"`
}

// Intent is one PaymentIntent at the provider at the end of the run, with
// the customer and key the shop put in its metadata: what the provider did,
// which no failover of the shop's database rolls back.
type Intent struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	Status   string `json:"status"`
	Amount   int64  `json:"amount"`
	Refunded bool   `json:"refunded,omitempty"`
	// AmountRefunded is what the provider's refunds of it gave back, in
	// all: Amount when Refunded, less for partial refunds.
	AmountRefunded int64 `json:"amount_refunded,omitempty"`
	Created        int64 `json:"created"`
}

// refunded is what the provider gave back of in (a history written before
// AmountRefunded has only Refunded).
func (in Intent) refunded() int64 {
	if in.Refunded {
		return max(in.AmountRefunded, in.Amount)
	}
	return in.AmountRefunded
}

// Refund is one refund the shop recorded as made (order_refunds, state
// refunded) at the end of the run: the shop's side of the provider's
// AmountRefunded.
type Refund struct {
	ID               string `json:"id"`
	Customer         string `json:"customer"`
	OrderID          string `json:"order_id"`
	Amount           int64  `json:"amount"`
	ProviderRefundID string `json:"provider_refund_id"`
}

// Order is one order in the shop's database at the end of the run.
type Order struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	ChargeID string `json:"charge_id"`
	Amount   int64  `json:"amount"`
}

// Stored is one order key in the shop's database at the end of the run:
// its status and, once finished, the answer it replays.
type Stored struct {
	// Kind is "" for an order key, KindRefund for a refund key (a cancel's
	// or an operator's: their answers are read alike).
	Kind     string `json:"kind,omitempty"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	Status   string `json:"status"`
	// ResponseStatus is 0 while the key is started.
	ResponseStatus int    `json:"response_status,omitempty"`
	BodyHash       string `json:"body_hash,omitempty"`
	OrderID        string `json:"order_id,omitempty"`
	// RefundID and Location are a refund key's answer's (Op's).
	RefundID string `json:"refund_id,omitempty"`
	Location string `json:"location,omitempty"`
}

// History is one run's record.
type History struct {
	Seed    uint64   `json:"seed"`
	Ops     []Op     `json:"ops"`
	Intents []Intent `json:"intents"`
	Orders  []Order  `json:"orders"`
	Keys    []Stored `json:"keys"`
	Refunds []Refund `json:"refunds,omitempty"`
}

// Hash is the hash a body is recorded by: two answers differ by a byte
// exactly when their hashes differ.
func Hash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Recorder collects a run's ops from every client goroutine.
type Recorder struct {
	began time.Time
	mu    sync.Mutex
	ops   []Op
}

// NewRecorder starts the clock the ops are timed on.
func NewRecorder(began time.Time) *Recorder { return &Recorder{began: began} }

// Add records one request: sent and answered are times of the harness's
// clock (with their monotonic reading), body the answer's body as read.
func (r *Recorder) Add(op Op, sent, answered time.Time, body []byte) {
	op.Call, op.Return = sent.Sub(r.began).Nanoseconds(), answered.Sub(r.began).Nanoseconds()
	if op.Status != 0 {
		op.BodyHash = Hash(body)
	}
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// Ops is a copy of what was recorded.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Write saves h as JSON at path.
func (h History) Write(path string) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Read loads a history that Write saved.
func Read(path string) (History, error) {
	var h History
	b, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
