package checkout_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pgtest"
)

// statementCounter counts the statements a pool sends, BEGIN and COMMIT
// included: each is one round trip to PostgreSQL.
type statementCounter struct{ n atomic.Int64 }

func (s *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	s.n.Add(1)
	return ctx
}

func (s *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// instantPayments answers every charge at once, so that what is measured is
// the engine's own work against the database. It stands in for the provider,
// not for the database.
// It remembers each intent it made, so that the confirm charges the
// intent's amount, as the provider does.
type instantPayments struct {
	n       atomic.Int64
	intents sync.Map // id → payment.Intent
}

func (p *instantPayments) CreateIntent(_ context.Context, req payment.IntentRequest) (payment.Intent, error) {
	in := payment.Intent{ID: fmt.Sprintf("pi_%d", p.n.Add(1)), Amount: req.Amount, Currency: req.Currency,
		Status: payment.StatusRequiresPaymentMethod}
	p.intents.Store(in.ID, in)
	return in, nil
}

func (p *instantPayments) ConfirmIntent(_ context.Context, id, _, _, _ string) (payment.Intent, error) {
	v, ok := p.intents.Load(id)
	if !ok {
		return payment.Intent{}, fmt.Errorf("no intent %s", id)
	}
	in := v.(payment.Intent)
	in.Status = payment.StatusSucceeded
	return in, nil
}

func (p *instantPayments) RetrieveIntent(context.Context, string) (payment.Intent, error) {
	return payment.Intent{}, errors.New("not used")
}

func (p *instantPayments) CancelIntent(context.Context, string, string) (payment.Intent, error) {
	return payment.Intent{}, errors.New("not used")
}

func (p *instantPayments) Refund(context.Context, string, string) (payment.Refund, error) {
	return payment.Refund{}, errors.New("not used")
}

// newCountedEngine returns an engine on a fresh database whose pool counts
// statements, a customer to order for, and the counter. answers, when not
// nil, is the engine's memory of finished answers (Config.Answers).
func newCountedEngine(tb testing.TB, answers idem.Answers) (*checkout.Engine, uuid.UUID, *statementCounter) {
	tb.Helper()
	counter := &statementCounter{}
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(tb))
	if err != nil {
		tb.Fatal(err)
	}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	d := database.New(pool)
	ctx := context.Background()
	if err := catalog.Seed(ctx, d.Queries); err != nil {
		tb.Fatal(err)
	}
	customer := uuid.New()
	if err := d.CreateCustomer(ctx, db.CreateCustomerParams{ID: customer, Name: "bench"}); err != nil {
		tb.Fatal(err)
	}
	cat := catalog.New(d.Queries, time.Hour)
	if _, err := cat.Products(ctx); err != nil { // warm the catalog
		tb.Fatal(err)
	}
	return checkout.New(d, cat, &instantPayments{}, checkout.Config{LockTimeout: 30 * time.Second,
		Answers: answers, AnswersFor: time.Minute, KeyRetention: 24 * time.Hour}), customer, counter
}

func attempt(customer uuid.UUID, key string) checkout.Attempt {
	return checkout.Attempt{
		CustomerID: customer, Key: key, Fingerprint: []byte("fp"),
		Order: checkout.Order{Items: []catalog.Item{{SKU: "mug-espresso", Quantity: 1}}, Card: "4242424242424242"},
	}
}

func TestRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, remember := range []bool{false, true} {
		t.Run(fmt.Sprintf("answers remembered: %v", remember), func(t *testing.T) {
			var answers idem.Answers
			if remember {
				answers = expirable.NewLRU[string, idem.Answer](100, nil, time.Minute)
			}
			e, customer, counter := newCountedEngine(t, answers)
			count := func(what string, want int64, a checkout.Attempt, ok func(checkout.Result) bool) {
				t.Helper()
				counter.n.Store(0)
				if res, err := e.Place(ctx, a); err != nil || !ok(res) {
					t.Fatalf("%s: got %+v, %v", what, res, err)
				}
				if got := counter.n.Load(); got != want {
					t.Errorf("%s: got %d round trips, want %d", what, got, want)
				}
			}
			placed := func(r checkout.Result) bool { return r.Status == 201 && !r.Replayed }
			replayed := func(r checkout.Result) bool { return r.Status == 201 && r.Replayed }

			// Three: the PaymentIntent's id is stored between its create and its
			// confirm (StoreIntent), what makes a completer's "not completed"
			// final without a call that charges (README, "PaymentIntents").
			count("new order (claim, store intent, finish)", 3, attempt(customer, "k"), placed)
			count("first replay (the claim reads the answer)", 1, attempt(customer, "k"), replayed)
			later := int64(1)
			if remember {
				later = 0 // the answer the first replay read is remembered
			}
			count("later replay", later, attempt(customer, "k"), replayed)
			reused := attempt(customer, "k")
			reused.Fingerprint = []byte("another request")
			counter.n.Store(0)
			if _, err := e.Place(ctx, reused); !errors.Is(err, checkout.ErrKeyReused) {
				t.Fatalf("key reused: got %v, want ErrKeyReused", err)
			}
			if got := counter.n.Load(); got != later {
				t.Errorf("key reused: got %d round trips, want %d", got, later)
			}
		})
	}
}

// BenchmarkPlace compares a new order with a replay of a finished one, on
// one database in one run; compare the two lines with each other, not with
// another run's.
func BenchmarkPlace(b *testing.B) {
	e, customer, _ := newCountedEngine(b, nil)
	ctx := context.Background()
	b.Run("new", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := e.Place(ctx, attempt(customer, fmt.Sprintf("new-%d", i))); err != nil {
				b.Fatal(err)
			}
		}
	})
	if _, err := e.Place(ctx, attempt(customer, "replayed")); err != nil {
		b.Fatal(err)
	}
	b.Run("replay", func(b *testing.B) {
		for b.Loop() {
			if res, err := e.Place(ctx, attempt(customer, "replayed")); err != nil || !res.Replayed {
				b.Fatal(res, err)
			}
		}
	})
}
