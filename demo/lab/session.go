package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/client"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
)

// session is one run in progress: its shopper, and the means its steps use.
type session struct {
	r       *Runner
	shopper shopper
	// shoppers are all the run's shoppers, shopper first: one, but for a
	// scenario with more (Scenario.shoppers).
	shoppers []shopper
	rec      *recorder
	// client is the Go client of the shopper, for placeAsClient.
	client *client.Client
	// browser is the shopper's browser in a scenario whose shopper is a
	// browser's (Scenario.browser); nil otherwise.
	browser *browser

	mu    sync.Mutex
	notes []string
	facts []Fact
	// failed is set by fail: a check beyond the counts went wrong.
	failed bool
}

// place sends one order attempt and records it. Its outcome is recorded,
// not returned as an error: a refusal is what the lab shows. It is a raw
// request, not the Go client's: the scenarios that use it fire a precise
// duplicate (a second click 50 ms later, ten at one instant, a key reused
// for another body, a retry before and after a lock expires), which the
// client, deciding itself when to retry, would never send.
func (s *session) place(ctx context.Context, label, key, body string, lockFor time.Duration) orderResponse {
	i := s.rec.begin(label, key)
	resp, err := s.r.api.placeOrder(ctx, s.shopper, key, body, lockFor)
	s.rec.end(i, resp, err)
	return resp
}

// The lanes of the double-click: each click's requests, numbered within it.
const (
	LaneClick1 = "Click 1"
	LaneClick2 = "Click 2"
)

// placeIn is place for an attempt of a lane, with the server's own lock.
func (s *session) placeIn(ctx context.Context, lane, label, key, body string) orderResponse {
	i := s.rec.beginIn(lane, label, key)
	resp, err := s.r.api.placeOrder(ctx, s.shopper, key, body, 0)
	s.rec.end(i, resp, err)
	return resp
}

// placeUntilAnswered sends a submit of a lane the way a client answers
// "key in use" (409): it waits until the key has an answer and asks again,
// and every request is recorded in the lane, so that the viewer sees the
// 409 and the answer it waited for. The checkout page does the same wait on
// the server (POST /checkout holds the request).
func (s *session) placeUntilAnswered(ctx context.Context, lane, key, body string) orderResponse {
	label := "submit"
	for {
		resp := s.placeIn(ctx, lane, label, key, body)
		if resp.status != http.StatusConflict || resp.problem != problem.KeyInUse.Slug {
			return resp
		}
		if err := s.waitKeyAnswered(ctx, key); err != nil {
			return orderResponse{}
		}
		label = "asked again"
	}
}

// waitKeyAnswered waits until the key is no longer being worked on by the
// database's account.
func (s *session) waitKeyAnswered(ctx context.Context, key string) error {
	for {
		k, err := s.r.db.GetKey(ctx, db.GetKeyParams{CustomerID: s.shopper.ID, Key: key})
		if err != nil && !errors.Is(err, database.ErrNotFound) {
			return fmt.Errorf("get key: %w", err)
		}
		if err == nil && (k.Status != "started" || k.LockRemaining <= 0) {
			return nil
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// placeAsClient places the order op of the run's shopper through the Go
// client (package client), as a program using the API would: the client
// keeps one key per op, so a second call for the same op resends that key,
// and it retries by its own policy. Every attempt it sends is recorded
// under label; the answer of the last is returned. The error is for a call
// that failed without a final answer (a refusal is an answer).
func (s *session) placeAsClient(ctx context.Context, label, op string, order client.OrderRequest) (orderResponse, error) {
	call := &clientCall{label: label}
	_, err := s.client.PlaceOrder(context.WithValue(ctx, clientCallKey{}, call), op, order)
	var refused *client.Problem
	if err != nil && !errors.As(err, &refused) {
		return orderResponse{}, fmt.Errorf("%s: %w", label, err)
	}
	call.mu.Lock()
	defer call.mu.Unlock()
	return call.last, nil
}

// orderCart orders a version of a cart of the run's shopper, as a checkout
// tab showing that version does, and records it under label. The key is the
// cart version's, so it is recorded as such.
func (s *session) orderCart(ctx context.Context, label string, cart uuid.UUID, version int64) orderResponse {
	i := s.rec.begin(label, fmt.Sprintf("cart v%d", version))
	resp, err := s.r.api.orderCart(ctx, s.shopper, cart, version)
	s.rec.end(i, resp, err)
	return resp
}

// concurrently sends n attempts at the same instant: each waits on one
// barrier, so none has a head start of a goroutine's creation. They are
// numbered in the order they were sent, which is the scheduler's.
func (s *session) concurrently(ctx context.Context, n int, attempt func() (label, key string)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		label, key := attempt()
		wg.Go(func() {
			<-start
			s.place(ctx, label, key, oneMug, 0)
		})
	}
	close(start)
	wg.Wait()
}

// shopperIDs are the customer ids of the run's shoppers.
func (s *session) shopperIDs() []uuid.UUID {
	ids := make([]uuid.UUID, len(s.shoppers))
	for i, sh := range s.shoppers {
		ids[i] = sh.ID
	}
	return ids
}

func (s *session) setProvider(b Behaviour) error {
	return s.r.faults.SetBehaviour(b)
}

func (s *session) stall(key string) (release func()) {
	return s.r.stalls.add(s.shopper.ID, key)
}

func (s *session) note(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, text)
}

// fact adds a headline to the run's counts.
func (s *session) fact(label, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.facts = append(s.facts, Fact{Label: label, Value: value})
}

// fail notes a check beyond the counts that went wrong: the run is not as
// expected, whatever its counts.
func (s *session) fail(text string) {
	s.note(text)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = true
}

// waitLockExpired waits until the key exists and the database clock says
// its lock has expired. It polls the condition rather than sleeping a guess:
// the server's clock never judges a lock, and neither does the lab's.
func (s *session) waitLockExpired(ctx context.Context, key string) error {
	for {
		k, err := s.r.db.GetKey(ctx, db.GetKeyParams{CustomerID: s.shopper.ID, Key: key})
		wait := 20 * time.Millisecond
		switch {
		case errors.Is(err, database.ErrNotFound):
			// Not claimed yet.
		case err != nil:
			return fmt.Errorf("get key: %w", err)
		case k.Status != "started":
			return fmt.Errorf("key finished before its lock expired")
		case k.LockRemaining <= 0:
			return nil
		default:
			wait = min(k.LockRemaining, 50*time.Millisecond)
		}
		if err := sleep(ctx, wait); err != nil {
			return fmt.Errorf("wait for the lock to expire: %w", err)
		}
	}
}

// markCharged marks when the provider charged for key: at its claim, by
// the database's audit trail, since the claiming attempt calls the
// provider at once and a provider without delay charges on that call
// (crash-after-charge). The answer that is then lost is the attempt's bar.
func (s *session) markCharged(ctx context.Context, key string) error {
	events, err := s.r.db.ListKeyEvents(ctx, db.ListKeyEventsParams{CustomerID: s.shopper.ID, Key: key, MaxRows: maxEvents})
	if err != nil {
		return fmt.Errorf("list key events: %w", err)
	}
	for _, e := range events {
		if e.Event == "claimed" {
			s.rec.markAt("charged", e.At)
			return nil
		}
	}
	return nil
}

// noteOriginalCharge checks that a recovered order carries the
// PaymentIntent the original attempt created, not a new one.
func (s *session) noteOriginalCharge(ctx context.Context, key string, recovered orderResponse) error {
	k, err := s.r.db.GetKey(ctx, db.GetKeyParams{CustomerID: s.shopper.ID, Key: key})
	if err != nil {
		return fmt.Errorf("get key: %w", err)
	}
	intents, err := s.r.faults.IntentsByMetadata(ctx, map[string]string{"operation_id": k.OperationID.String()})
	if err != nil || len(intents) == 0 {
		return fmt.Errorf("provider intent: %w", err)
	}
	ch := intents[0]
	if recovered.chargeID == ch.ID {
		s.note("the recovered order carries the original charge " + ch.ID)
	} else {
		s.note(fmt.Sprintf("the recovered order carries charge %q, not the original %s", recovered.chargeID, ch.ID))
	}
	return nil
}
