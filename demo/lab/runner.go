package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/demo/lab/labdb"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
)

// Errors of Runner.Run.
var (
	// ErrBusy means another run is in flight. The provider's behaviour is
	// global, so two runs at once would spoil each other.
	ErrBusy = errors.New("a run is in progress")
	// ErrUnknownScenario means no scenario has the ID asked for.
	ErrUnknownScenario = errors.New("no such scenario")
)

// runFailed is what the page says of a run that could not be carried out;
// the log has the cause, which is not for the page.
const runFailed = "The run could not be carried out; the server log says why. Try it again."

// runTimeout bounds a whole run; the slowest takes about four seconds.
const runTimeout = 30 * time.Second

// maxKeys bounds the keys the lab reads for one shopper.
const maxKeys = 50

// Runner runs scenarios, one at a time, and remembers the last run of each.
type Runner struct {
	api    *apiClient
	db     *database.DB
	q      *labdb.Queries // the lab's own queries (lab.sql)
	faults Provider
	stalls stalls
	// crashes kill chosen loyalty jobs once (CrashAfterAward).
	crashes crashes
	limits  Limits
	log     *slog.Logger

	// busy is held for the whole of a run; TryLock refuses a second.
	busy sync.Mutex

	mu   sync.Mutex // guards the fields below
	live *liveRun   // the run in flight, or nil
	last map[string]Run
	// latest is the ID of the scenario run last.
	latest string
}

type liveRun struct {
	scenario string
	customer uuid.UUID
	// shoppers are all the run's shoppers, customer first.
	shoppers []uuid.UUID
	started  time.Time
	rec      *recorder
	laneNoun string
}

// New returns a runner that sends its requests to the server at baseURL
// (the server's own loopback address), reads the database through d, and
// sets the fake provider's faults; limits are the server's settings its
// scenarios must fit in.
func New(baseURL string, d *database.DB, faults Provider, limits Limits, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{api: newAPIClient(baseURL), db: d, q: labdb.New(d.Conn()), faults: faults, limits: limits, log: log, last: map[string]Run{}}
}

// Stall is the engine hook through which the lab freezes an attempt (see
// stalls): installed as BeforeRenew, BeforeFence and BeforeFinish, it stops
// the attempt's heartbeat, its fence and its finish, as a paused process
// would. It does nothing to attempts the lab has not stalled.
func (r *Runner) Stall(ctx context.Context, c checkout.Claimed) {
	r.stalls.wait(ctx, c)
}

// Run runs the scenario named id and returns its record. It returns ErrBusy
// while another run is in flight, and ErrCannotRun when the scenario does
// not fit the server's configuration (CannotRun says why). The run is not cut short when ctx is
// cancelled (a browser that navigates away), only bounded by runTimeout: a
// run stopped half-way would leave the provider's fault set.
func (r *Runner) Run(ctx context.Context, id string) (Run, error) {
	sc, ok := ScenarioByID(id)
	if !ok {
		return Run{}, ErrUnknownScenario
	}
	behaviour, why := r.limits.plan(sc)
	if why != "" {
		return Run{}, ErrCannotRun
	}
	if !r.busy.TryLock() {
		return Run{}, ErrBusy
	}
	defer r.busy.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runTimeout)
	defer cancel()

	run := Run{Scenario: sc.ID, Started: time.Now()}
	var s *session
	var err error
	if sc.prepare != nil {
		err = sc.prepare(ctx, r)
	}
	if err == nil {
		s, err = r.start(ctx, sc)
	}
	if err != nil {
		run.Error = runFailed
		r.log.ErrorContext(ctx, "lab: start run", "scenario", sc.ID, "err", err)
		r.mu.Lock()
		r.last[sc.ID] = run
		r.mu.Unlock()
		return run, nil
	}
	run.CustomerID, run.Shoppers = s.shopper.ID, s.shopperIDs()

	previous := r.faults.Behaviour()
	err = r.faults.SetBehaviour(behaviour)
	if err == nil {
		err = sc.steps(ctx, s)
	}
	if rerr := r.faults.SetBehaviour(previous); rerr != nil && err == nil {
		err = rerr
	}

	run.Attempts = s.rec.snapshot()
	run.Marks = s.rec.marksSnapshot()
	run.LaneNoun = sc.laneNoun
	run.Duration = time.Since(s.rec.began)
	run.Notes = s.notes
	run.Facts = s.facts
	if err == nil {
		run.Charges, run.Orders, err = r.count(ctx, run.Shoppers)
	}
	if err != nil {
		run.Error = runFailed
		r.log.ErrorContext(ctx, "lab: run failed", "scenario", sc.ID, "err", err)
	}
	s.mu.Lock()
	failed := s.failed
	s.mu.Unlock()
	run.AsExpected = err == nil && !failed && run.Charges == sc.WantCharges && run.Orders == sc.WantOrders

	r.mu.Lock()
	r.live = nil
	r.last[sc.ID] = run
	r.mu.Unlock()
	return run, nil
}

// start registers the run's shopper, through the API or, for a scenario of
// the pages, as a browser does (the last-mug run registers two through the
// API), and publishes the run as live.
func (r *Runner) start(ctx context.Context, sc Scenario) (*session, error) {
	s := &session{r: r}
	var err error
	if sc.browser {
		s.browser, s.shopper, err = r.newBrowserShopper(ctx)
		s.shoppers = []shopper{s.shopper}
	} else {
		for i := range max(sc.shoppers, 1) {
			name := "lab: " + sc.ID
			if sc.shoppers > 1 {
				name += fmt.Sprintf(" (shopper %d)", i+1)
			}
			var sh shopper
			if sh, err = r.api.newShopper(ctx, name); err != nil {
				break
			}
			s.shoppers = append(s.shoppers, sh)
		}
		if err == nil {
			s.shopper = s.shoppers[0]
		}
	}
	if err != nil {
		return nil, err
	}
	// The run's timeline starts once its shopper is there.
	s.rec = newRecorder()
	sh := s.shopper
	s.client = r.api.goClient(sh, s.rec)
	r.mu.Lock()
	r.live = &liveRun{scenario: sc.ID, customer: sh.ID, shoppers: s.shopperIDs(), started: s.rec.began, rec: s.rec, laneNoun: sc.laneNoun}
	r.latest = sc.ID
	r.mu.Unlock()
	return s, nil
}

// count reads the shoppers' charges from the fake and their orders from
// the database. The shop writes its customer's id in every PaymentIntent's
// metadata, which is how the fake finds them, as Stripe's search would.
func (r *Runner) count(ctx context.Context, customers []uuid.UUID) (charges, orders int64, err error) {
	// One customer at a time, as the shop's hot tables are read
	// (internal/distribution): a run has one or two.
	for _, customer := range customers {
		intents, err := r.faults.IntentsByMetadata(ctx, map[string]string{"customer_id": customer.String()})
		if err != nil {
			return 0, 0, fmt.Errorf("count charges: %w", err)
		}
		for _, in := range intents {
			if in.Status == "succeeded" {
				charges++
			}
		}
		n, err := r.q.CountCustomerOrders(ctx, customer)
		if err != nil {
			return 0, 0, fmt.Errorf("count orders: %w", err)
		}
		orders += n
	}
	return charges, orders, nil
}

// Last returns the last finished run of the scenario named id.
func (r *Runner) Last(id string) (Run, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.last[id]
	return run, ok
}

// Live returns the run in flight, with the attempts sent so far.
func (r *Runner) Live() (Run, bool) {
	r.mu.Lock()
	l := r.live
	r.mu.Unlock()
	if l == nil {
		return Run{}, false
	}
	return Run{
		Scenario: l.scenario, CustomerID: l.customer, Shoppers: l.shoppers, Started: l.started,
		Duration: time.Since(l.started), Running: true, Attempts: l.rec.snapshot(),
		Marks: l.rec.marksSnapshot(), LaneNoun: l.laneNoun,
	}, true
}

// Latest returns the run in flight, or else the run that finished last.
func (r *Runner) Latest() (Run, bool) {
	if run, ok := r.Live(); ok {
		return run, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.last[r.latest]
	return run, ok
}

// SetProvider sets the fake provider's behaviour for everything that
// follows, as the lab's fault panel asks. It returns ErrBusy while a run is
// in flight: the run would put its predecessor back over it when it ends.
func (r *Runner) SetProvider(b Behaviour) error {
	if !r.busy.TryLock() {
		return ErrBusy
	}
	defer r.busy.Unlock()
	return r.faults.SetBehaviour(b)
}

// Provider returns the fake provider's current behaviour.
func (r *Runner) Provider() Behaviour {
	return r.faults.Behaviour()
}
