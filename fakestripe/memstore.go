package fakestripe

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"
)

// memoryStore keeps the fake's state in memory, for load tests
// (FAKE_PROVIDER_STORE=memory): at Stripe a charge costs the shop nothing
// but the wait, and a fake that runs its own transactions on the same two
// cores would be measured as the shop. It loses everything on restart, so
// the chaos runs, which restart the fake and hold the shop's orders
// against its books, never use it. It grows with every intent and key and
// frees nothing: a load test's run is bounded, a long-lived fake is not.
//
// One mutex serializes the transactions: they only touch maps, so the
// fake's work stays a small share of the shop's. A second request with a
// key therefore waits for the first and is answered its stored answer, as
// Stripe may answer it once the first has finished; only a key HoldKey
// holds is answered 409 as in use.
type memoryStore struct {
	mu      sync.Mutex
	seq     int64
	intents map[string]Intent
	// order is the intents' ids by Seq.
	order      []string
	refundByID map[string]Refund
	// refundOrder is the refunds' ids by Seq.
	refundOrder []string
	refundSeq   int64
	// charges is the intent of each charge ever made, for a refund by
	// charge (checked against the intent's latest charge).
	charges map[string]string
	keys    map[string]storedKey
	// held counts the holds (HoldKey) on each key.
	held map[string]int
}

// storedKey is an idempotency key's first answer and its request's hash.
type storedKey struct {
	hash   []byte
	status int
	body   []byte
}

func newMemoryStore() *memoryStore {
	return &memoryStore{intents: map[string]Intent{}, refundByID: map[string]Refund{}, charges: map[string]string{},
		keys: map[string]storedKey{}, held: map[string]int{}}
}

// inTx runs fn under the store's lock with its writes held aside, and
// applies them when fn returns nil.
func (s *memoryStore) inTx(ctx context.Context, fn func(tx storeTx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := &memoryTx{s: s, intents: map[string]Intent{}, keys: map[string]storedKey{}}
	if err := fn(tx); err != nil {
		return fmt.Errorf("fakestripe transaction: %w", err)
	}
	s.order = append(s.order, tx.added...)
	maps.Copy(s.intents, tx.intents)
	for _, in := range tx.intents {
		if in.LatestCharge != nil {
			s.charges[*in.LatestCharge] = in.ID
		}
	}
	for _, r := range tx.refunds {
		s.refundByID[r.ID], s.refundOrder = r, append(s.refundOrder, r.ID)
	}
	maps.Copy(s.keys, tx.keys)
	return nil
}

// memoryTx is a transaction of memoryStore: what it wrote, applied at
// commit.
type memoryTx struct {
	s       *memoryStore
	intents map[string]Intent
	added   []string
	refunds []Refund
	keys    map[string]storedKey
}

func (t *memoryTx) claimKey(_ context.Context, key string) error {
	if t.s.held[key] > 0 {
		return errKeyInUse
	}
	return nil
}

func (t *memoryTx) storedAnswer(_ context.Context, key string) ([]byte, answer, bool, error) {
	k, ok := t.keys[key]
	if !ok {
		k, ok = t.s.keys[key]
	}
	return k.hash, answer{status: k.status, body: k.body}, ok, nil
}

func (t *memoryTx) storeAnswer(_ context.Context, key string, hash []byte, a answer) error {
	t.keys[key] = storedKey{hash: hash, status: a.status, body: a.body}
	return nil
}

func (t *memoryTx) insertIntent(_ context.Context, in *Intent) error {
	if _, ok := t.s.intents[in.ID]; ok {
		return fmt.Errorf("insert intent: %s exists", in.ID)
	}
	// Taken at once, as a sequence is: a rolled-back insert leaves a gap.
	t.s.seq++
	in.Seq, in.Created = t.s.seq, time.Now().Unix()
	t.intents[in.ID], t.added = *in, append(t.added, in.ID)
	return nil
}

func (t *memoryTx) lockIntent(_ context.Context, id string) (Intent, error) {
	in, ok := t.intents[id]
	if !ok {
		if in, ok = t.s.intents[id]; !ok {
			return Intent{}, errNotFound
		}
	}
	in.refundedInFull()
	return in, nil
}

func (t *memoryTx) saveIntent(ctx context.Context, in Intent) error {
	cur, err := t.lockIntent(ctx, in.ID)
	if err != nil {
		return fmt.Errorf("save intent: %w", err)
	}
	// Written by refunds only, as the database's UPDATE leaves it.
	in.AmountRefunded = cur.AmountRefunded
	t.intents[in.ID] = in
	return nil
}

func (t *memoryTx) intentOfCharge(ctx context.Context, charge string) (string, error) {
	id, ok := t.s.charges[charge]
	for _, in := range t.intents {
		if in.LatestCharge != nil && *in.LatestCharge == charge {
			id, ok = in.ID, true
		}
	}
	if !ok {
		return "", errNotFound
	}
	in, err := t.lockIntent(ctx, id)
	if err != nil || in.LatestCharge == nil || *in.LatestCharge != charge {
		return "", errNotFound // a charge the intent has since replaced
	}
	return id, nil
}

func (t *memoryTx) insertRefund(ctx context.Context, r *Refund) error {
	in, err := t.lockIntent(ctx, r.PaymentIntentID)
	if err != nil {
		return fmt.Errorf("insert refund: %w", err)
	}
	// The database's CHECKs, as a last word.
	if r.Amount < 1 || in.AmountRefunded+r.Amount > in.Amount {
		return fmt.Errorf("insert refund: %d more refunded of %s, %d of %d refunded already", r.Amount, r.PaymentIntentID,
			in.AmountRefunded, in.Amount)
	}
	in.AmountRefunded += r.Amount
	t.intents[in.ID] = in
	// Taken at once, as a sequence is.
	t.s.refundSeq++
	r.Seq, r.Created = t.s.refundSeq, time.Now().Unix()
	r.Metadata = maps.Clone(r.metadata())
	t.refunds = append(t.refunds, *r)
	return nil
}

func (s *memoryStore) intent(ctx context.Context, id string) (Intent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read(id)
}

// read is the intent id as committed; s.mu must be held.
func (s *memoryStore) read(id string) (Intent, error) {
	in, ok := s.intents[id]
	if !ok {
		return Intent{}, errNotFound
	}
	in.refundedInFull()
	return in, nil
}

func (s *memoryStore) refund(_ context.Context, id string) (Refund, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.refundByID[id]
	if !ok {
		return Refund{}, errNotFound
	}
	return r, nil
}

func (s *memoryStore) refunds(_ context.Context, q refundQuery) ([]Refund, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Refund
	for i := range s.refundOrder {
		if q.newestFirst {
			i = len(s.refundOrder) - 1 - i
		}
		r := s.refundByID[s.refundOrder[i]]
		if (q.intentID == "" || r.PaymentIntentID == q.intentID) && q.holds(r.Seq) {
			out = append(out, r)
			if len(out) == q.limit {
				break
			}
		}
	}
	return out, nil
}

func (s *memoryStore) list(_ context.Context, q listQuery) ([]Intent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Intent
	for i := range s.order {
		if q.newestFirst {
			i = len(s.order) - 1 - i
		}
		in, err := s.read(s.order[i])
		if err != nil {
			return nil, fmt.Errorf("list intents: %w", err)
		}
		if q.selects(in) {
			out = append(out, in)
			if len(out) == q.limit {
				break
			}
		}
	}
	return out, nil
}

// selects reports whether q selects in (its limit and order aside).
func (q listQuery) selects(in Intent) bool {
	for k, v := range q.metadata {
		if got, ok := in.Metadata[k]; !ok || got != v {
			return false
		}
	}
	for _, b := range q.created {
		if !b.holds(in.Created) {
			return false
		}
	}
	return q.holds(in.Seq)
}

func (s *memoryStore) succeeded(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, in := range s.intents {
		if in.Status == StatusSucceeded {
			n++
		}
	}
	return n, nil
}

func (s *memoryStore) holdKey(_ context.Context, key string) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.held[key]--; s.held[key] == 0 {
				delete(s.held, key)
			}
		})
	}, nil
}
