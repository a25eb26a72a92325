package payment_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"exactlyonce/internal/stripetest"
)

// BenchmarkCallPatterns measures the two ways of charging a PaymentIntent
// that issue 24 left to choose between, through the SDK against the fake
// Stripe on a real PostgreSQL (the fake's state, as in every test), one
// operation per iteration:
//
//   - two-calls: create the intent, then confirm it by its id (what the
//     engine does, with the id stored in the key's row in between, an
//     UPDATE on the shop's database this benchmark leaves out);
//   - one-call: create it with confirm=true and the payment method.
//
// Each runs alone (serial) and from 16 goroutines at once (parallel), the
// load test's client count. Only the ratio of the two within one run
// means anything; README "PaymentIntents" and docs/performance.md give the
// figures and the choice.
func BenchmarkCallPatterns(b *testing.B) {
	s := stripetest.Start(b)
	c := s.Client(10 * time.Second)
	prefix := rand.Text()[:8]
	var n atomic.Int64
	key := func() string { return fmt.Sprintf("bench-%s-%d", prefix, n.Add(1)) }
	patterns := []struct {
		name   string
		charge func(ctx context.Context) error
	}{
		{"two-calls", func(ctx context.Context) error {
			k := key()
			in, err := c.CreateIntent(ctx, request(k))
			if err != nil {
				return err
			}
			_, err = c.ConfirmIntent(ctx, in.ID, k+"/confirm", "pm_card_visa", "")
			return err
		}},
		{"one-call", func(ctx context.Context) error {
			req := request(key())
			req.PaymentMethod, req.Confirm = "pm_card_visa", true
			_, err := c.CreateIntent(ctx, req)
			return err
		}},
	}
	for _, p := range patterns {
		b.Run(p.name+"/serial", func(b *testing.B) {
			for b.Loop() {
				if err := p.charge(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(p.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := p.charge(b.Context()); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
