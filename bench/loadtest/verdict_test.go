package loadtest

import (
	"strings"
	"testing"
)

func TestStatementsCountsRoundTrips(t *testing.T) {
	for _, c := range []struct {
		script string
		fakeDB bool
		want   int
	}{
		// the claim; the fake Stripe's create (BEGIN, the key's lock,
		// its stored answer, the intent, the answer, COMMIT); the fenced
		// store of the intent's id; the fake's confirm (BEGIN, lock,
		// stored answer, the intent locked, updated, the answer, COMMIT);
		// the finish
		{"neworder.sql", true, 16},
		// the fake's in memory: the claim, the store, the finish
		{"neworder.sql", false, 3},
		// look up, insert, order, finish, event; the same two
		// transactions of the fake
		{"seed.sql", true, 18},
		{"seed.sql", false, 5},
		{"pointselect.sql", false, 1},
	} {
		got, err := Statements(c.script, c.fakeDB)
		if err != nil || got != c.want {
			t.Errorf("%s (fake in the database: %v): got %d statements, %v, want %d", c.script, c.fakeDB, got, err, c.want)
		}
	}
}

func TestPrintVerdicts(t *testing.T) {
	var b strings.Builder
	err := PrintVerdicts(&b, []Verdict{
		{Target: "replays ≥ 0.3×", Measured: "0.53×", Met: true, Why: "not shown"},
		{Target: "CPU ≤ 60 µs", Measured: "64 µs", Why: "the floor is 34 µs"},
	})
	got := b.String()
	if err != nil || !strings.Contains(got, "- replays ≥ 0.3×: 0.53× — met\n") ||
		!strings.Contains(got, "- CPU ≤ 60 µs: 64 µs — NOT MET. the floor is 34 µs\n") || strings.Contains(got, "not shown") {
		t.Fatalf("got %q, %v", got, err)
	}
}
