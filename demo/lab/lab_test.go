package lab_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/demo/lab"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/pgtest"
	"exactlyonce/internal/problem"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// run runs the scenario named id through the application's lab runner, the
// code the Run button calls, on a server of its own. It checks the run's
// counts against the scenario's and against the whole database, where the
// run's shopper is the only one.
func run(t *testing.T, id string) (*apptest.Harness, lab.Run) {
	t.Helper()
	h := apptest.New(t, withLab)
	r, err := labOf(h).Run(t.Context(), id)
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	if r.Error != "" {
		t.Fatalf("run %s failed: %s (TEST_LOG=1 shows the cause)", id, r.Error)
	}
	sc, _ := lab.ScenarioByID(id)
	if r.Charges != sc.WantCharges || r.Orders != sc.WantOrders || !r.AsExpected {
		t.Errorf("got %d charges and %d orders (as expected: %v), want %d and %d",
			r.Charges, r.Orders, r.AsExpected, sc.WantCharges, sc.WantOrders)
	}
	h.WantStats(t, sc.WantCharges, sc.WantOrders)
	for _, a := range r.Attempts {
		if !a.Done || a.Error != "" || a.End < a.Start {
			t.Errorf("attempt %d: got %+v, want a complete response", a.N, a)
		}
	}
	return h, r
}

// outcome is an attempt as the assertions spell it: "201", "201 replayed",
// "409 request-in-progress", then " held" or " took over" for the holder
// of the lock.
func outcome(a lab.Attempt) string {
	s := fmt.Sprint(a.Status)
	if a.Problem != "" {
		s += " " + a.Problem
	}
	if a.Replayed {
		s += " replayed"
	}
	if a.Lock != lab.LockNone {
		s += " " + string(a.Lock)
	}
	return s
}

func outcomes(r lab.Run) []string {
	out := make([]string, len(r.Attempts))
	for i, a := range r.Attempts {
		out[i] = outcome(a)
	}
	return out
}

// wantOutcomes fails unless the attempts answered exactly want, in order.
func wantOutcomes(t *testing.T, r lab.Run, want ...string) {
	t.Helper()
	got := outcomes(r)
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("got attempts\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// wantOneWinner fails unless exactly one of n attempts held the lock and
// made the order, and every other was told to wait or was replayed: which
// one depends on the scheduler, not on the server.
func wantOneWinner(t *testing.T, r lab.Run, n int) {
	t.Helper()
	if len(r.Attempts) != n {
		t.Fatalf("got %d attempts, want %d", len(r.Attempts), n)
	}
	winners := 0
	for _, a := range r.Attempts {
		switch outcome(a) {
		case "201 held":
			winners++
		case "409 " + problem.KeyInUse.Slug, "201 replayed":
		default:
			t.Errorf("attempt %d (%s): got %s, want 409 or a replayed 201", a.N, a.Label, outcome(a))
		}
	}
	if winners != 1 {
		t.Errorf("got %d attempts that held the lock, want 1: %v", winners, outcomes(r))
	}
}

func TestDoubleClick(t *testing.T) {
	t.Parallel()
	_, r := run(t, "double-click")
	wantOneWinner(t, r, 3)
	if gap := r.Attempts[1].Start - r.Attempts[0].Start; gap < 50*time.Millisecond {
		t.Errorf("got the second click %v after the first, want 50ms or more", gap)
	}
	// Two lanes, one per click: the first click's submit holds the key; the
	// second's is told to wait, then asks again and gets the first's order.
	var got []string
	for _, a := range r.Attempts {
		got = append(got, a.Lane+" "+a.Label+": "+outcome(a))
	}
	want := []string{
		lab.LaneClick1 + " submit: 201 held",
		lab.LaneClick2 + " submit: 409 " + problem.KeyInUse.Slug,
		lab.LaneClick2 + " asked again: 201 replayed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got attempts\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if r.LaneNoun != "click" {
		t.Errorf("got lane noun %q, want click", r.LaneNoun)
	}
}

func TestTenAtOnce(t *testing.T) {
	t.Parallel()
	_, r := run(t, "ten-at-once")
	wantOneWinner(t, r, 10)
}

func TestBaselineWithFreshKeys(t *testing.T) {
	t.Parallel()
	_, r := run(t, "baseline")
	want := make([]string, 10)
	keys := map[string]bool{}
	for i := range want {
		want[i] = "201 held"
		keys[r.Attempts[i].Key] = true
	}
	wantOutcomes(t, r, want...)
	if len(keys) != 10 {
		t.Errorf("got %d distinct keys, want 10", len(keys))
	}
}

func TestTamperedResubmit(t *testing.T) {
	t.Parallel()
	_, r := run(t, "tampered")
	wantOutcomes(t, r, "201 held", "422 "+problem.KeyReused.Slug)
}

func TestCrashAfterCharge(t *testing.T) {
	t.Parallel()
	_, r := run(t, "crash-after-charge")
	wantOutcomes(t, r,
		"502 "+problem.OutcomeUnknown.Slug+" held",
		"201 took over")
	// The charge lands while the original waits for the answer it loses.
	if m := wantMarks(t, r, "charged"); len(m) == 1 && m[0].At > r.Attempts[0].End {
		t.Errorf("charged at %v, after the original's answer at %v", m[0].At, r.Attempts[0].End)
	}
	// The key was handed back: the client is told a short wait, not the
	// server's lock.
	if r.Attempts[0].RetryAfter != "2" {
		t.Errorf("original: got Retry-After %q, want 2 (the key handed back)", r.Attempts[0].RetryAfter)
	}
	if len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "the recovered order carries the original charge") {
		t.Errorf("got notes %q, want the original charge recovered", r.Notes)
	}
}

// TestWebhookBeforeTheAnswer: the provider delivers the charge's webhook
// before it answers the confirm, so the shop's webhook handler meets the
// intent while its key is still started; it records the event as pending
// and writes nothing else, and the attempt writes the one order.
func TestWebhookBeforeTheAnswer(t *testing.T) {
	t.Parallel()
	h, r := run(t, "webhook-first")
	wantOutcomes(t, r, "201 held")
	wantMarks(t, r, "webhook", "order written")
	if len(r.Facts) != 1 || r.Facts[0] != (lab.Fact{Label: "webhook", Value: "pending"}) {
		t.Errorf("got facts %+v, want the webhook pending", r.Facts)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "before the order was written") {
		t.Errorf("got notes %q, want the webhook handled before the order", r.Notes)
	}
	// One event in the inbox, and no refund: the handler left the charge
	// to the order.
	if got := h.Count(t, `SELECT count(*) FROM stripe_events WHERE type = 'payment_intent.succeeded'`); got != 1 {
		t.Errorf("got %d payment_intent.succeeded events in the inbox, want 1", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM reconciled_refunds`); got != 0 {
		t.Errorf("got %d refunds, want none", got)
	}
}

func TestSlowOriginal(t *testing.T) {
	t.Parallel()
	_, r := run(t, "slow-original")
	wantOutcomes(t, r,
		"409 "+problem.LockLost.Slug+" held",
		"201 took over",
		"201 replayed")
	// The lock expires before the retry is sent, and the original wakes
	// after the retry's answer.
	if m := wantMarks(t, r, "lock expired", "original wakes"); len(m) == 2 {
		if m[0].At > r.Attempts[1].Start || m[1].At < r.Attempts[1].End {
			t.Errorf("got marks %+v, want the expiry before the retry (%v) and the wake after its answer (%v)", m, r.Attempts[1].Start, r.Attempts[1].End)
		}
	}
	original, retry := r.Attempts[0], r.Attempts[1]
	if retry.Start < time.Second {
		t.Errorf("retry sent %v into the run, want after the 1s lock expired", retry.Start)
	}
	if original.End < retry.End {
		t.Errorf("original answered at %v, before the retry at %v: want it woken after the takeover", original.End, retry.End)
	}
}

func TestRefreshAfterSuccess(t *testing.T) {
	t.Parallel()
	_, r := run(t, "refresh")
	wantOutcomes(t, r, "201 held", "201 replayed")
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "byte-for-byte") {
		t.Errorf("got notes %q, want the replay byte-for-byte", r.Notes)
	}
}

func TestRunsTakeTurnsAndRestoreTheProvider(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	runner := labOf(h)
	manual := lab.Behaviour{Delay: 20 * time.Millisecond, Fail: lab.FaultDecline}
	if err := runner.SetProvider(manual); err != nil {
		t.Fatal(err)
	}

	done := make(chan lab.Run)
	go func() {
		r, err := runner.Run(t.Context(), "slow-original")
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	waitLive(t, runner)
	if _, err := runner.Run(t.Context(), "refresh"); !errors.Is(err, lab.ErrBusy) {
		t.Errorf("second run: got %v, want ErrBusy", err)
	}
	if err := runner.SetProvider(lab.Behaviour{}); !errors.Is(err, lab.ErrBusy) {
		t.Errorf("fault change during a run: got %v, want ErrBusy", err)
	}
	if got := h.Provider.Behaviour(); got.Delay != 2*time.Second {
		t.Errorf("during the run: got provider %+v, want the scenario's 2s delay", got)
	}
	r := <-done
	if !r.AsExpected {
		t.Errorf("slow original with a manual fault set before: got %+v, want as expected", r)
	}
	if got := h.Provider.Behaviour(); got.Delay != manual.Delay || string(got.Fail) != string(manual.Fail) {
		t.Errorf("after the run: got provider %+v, want the manual setting %+v back", got, manual)
	}
	if _, err := runner.Run(t.Context(), "no-such"); !errors.Is(err, lab.ErrUnknownScenario) {
		t.Errorf("unknown scenario: got %v, want ErrUnknownScenario", err)
	}
}

func TestInspect(t *testing.T) {
	t.Parallel()
	h, r := run(t, "crash-after-charge")
	runner := labOf(h)
	in, err := runner.Inspect(t.Context(), r.CustomerID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Keys) != 1 || in.Key != r.Attempts[0].Key {
		t.Fatalf("got keys %+v (selected %q), want the run's one key", in.Keys, in.Key)
	}
	if k := in.Keys[0]; k.Status != "finished" || k.ResponseCode != http.StatusCreated || len(k.TokenPrefix) != 8 {
		t.Errorf("got key %+v, want finished with 201 and a token prefix", k)
	}
	var events []string
	for _, e := range in.Events {
		events = append(events, e.Event)
	}
	if got, want := strings.Join(events, " "), "claimed taken_over finished"; got != want {
		t.Errorf("got events %q, want %q", got, want)
	}
	if _, err := runner.Inspect(t.Context(), uuid.New(), ""); !errors.Is(err, lab.ErrNotLabShopper) {
		t.Errorf("another customer: got %v, want ErrNotLabShopper", err)
	}
}

// waitLive waits until the runner has a run in flight.
func waitLive(t *testing.T, r *lab.Runner) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if run, ok := r.Live(); ok && len(run.Attempts) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no run in flight after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTwoTabs(t *testing.T) {
	t.Parallel()
	_, r := run(t, "two-tabs")
	wantOutcomes(t, r, "201 held", "201 replayed")
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "first tab's order") {
		t.Errorf("got notes %q, want the second tab answered with the first's order", r.Notes)
	}
}

func TestKeyPerRenderBaseline(t *testing.T) {
	t.Parallel()
	_, r := run(t, "key-per-render")
	wantOutcomes(t, r, "201 held", "201 held")
	if r.Attempts[0].Key == r.Attempts[1].Key {
		t.Error("the two renders sent one key, want a key each")
	}
}

func TestWorkerCrashAfterEffect(t *testing.T) {
	t.Parallel()
	withCatcher, _ := apptest.WithMailCatcher(t)
	h := apptest.New(t, withLab, withCatcher)
	h.StartJobs(t)
	r, err := labOf(h).Run(t.Context(), "worker-crash")
	if err != nil || r.Error != "" {
		t.Fatalf("run: got %v, %q", err, r.Error)
	}
	if !r.AsExpected || r.Charges != 1 || r.Orders != 1 {
		t.Errorf("got %d charges, %d orders, as expected %v (notes %q); want 1, 1, true", r.Charges, r.Orders, r.AsExpected, r.Notes)
	}
	if len(r.Notes) != 2 || !strings.Contains(r.Notes[0], "completed at attempt 2") || !strings.Contains(r.Notes[1], "one row") {
		t.Errorf("got notes %q, want the redelivery at attempt 2 and one ledger row", r.Notes)
	}
	if got := h.Count(t, `SELECT count(*) FROM loyalty_ledger`); got != 1 {
		t.Errorf("got %d ledger rows, want 1", got)
	}
	if m := wantMarks(t, r, "job died", "delivered again"); len(m) == 2 && m[0].At < r.Attempts[0].End {
		t.Errorf("the job died at %v, before the order was answered at %v", m[0].At, r.Attempts[0].End)
	}
}

// wantMarks fails unless the run's marks are labels, in order, each
// within the run, and returns them.
func wantMarks(t *testing.T, r lab.Run, labels ...string) []lab.Mark {
	t.Helper()
	var got []string
	for _, m := range r.Marks {
		got = append(got, m.Label)
		if m.At < 0 || m.At > r.Duration {
			t.Errorf("mark %q at %v, outside the run's %v", m.Label, m.At, r.Duration)
		}
	}
	if strings.Join(got, ", ") != strings.Join(labels, ", ") {
		t.Errorf("got marks %q, want %q", got, labels)
		return nil
	}
	return r.Marks
}

// withLab is an option of apptest.New: the shop with the double-click lab
// mounted, as the demo's binary serves it; labOf is its runner.
func withLab(s *apptest.Setup) { s.Demo = &lab.Demo{} }

func labOf(h *apptest.Harness) *lab.Runner { return h.App.Demo.(*lab.Demo).Runner }
