package chaos

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestReportGroupsViolations(t *testing.T) {
	t.Parallel()
	r := &Report{Violations: []Violation{}}
	if !r.Passed() || !strings.Contains(r.Summary(), "PASS") {
		t.Errorf("empty report: got passed %v, summary %q; want a pass", r.Passed(), r.Summary())
	}
	for i := range maxExamples + 2 {
		r.violate(violChargeNoOrder, "charge "+string(rune('a'+i)))
	}
	r.violate(violServerError, "key k")
	if r.Passed() {
		t.Fatal("a report with violations passed")
	}
	if len(r.Violations) != 2 {
		t.Fatalf("got %d kinds, want 2", len(r.Violations))
	}
	for _, v := range r.Violations {
		if v.Kind == violChargeNoOrder && (v.Count != maxExamples+2 || len(v.Examples) != maxExamples) {
			t.Errorf("got count %d with %d examples, want %d with %d", v.Count, len(v.Examples), maxExamples+2, maxExamples)
		}
	}
	if s := r.Summary(); !strings.HasPrefix(s, "chaos: FAIL (") || !strings.Contains(s, "7 "+violChargeNoOrder) {
		t.Errorf("summary: got %q", s)
	}
	var back Report
	if err := json.Unmarshal(r.JSON(), &back); err != nil || len(back.Violations) != 2 {
		t.Errorf("JSON round trip: got %d violations, error %v", len(back.Violations), err)
	}
}

// The asynchronous counterexample passes on lost writes and what its
// evidence shows they caused, and fails on the same kinds without that
// evidence: a contradiction whose first answer the database still holds
// is a broken promise, not a loss.
func TestLossFailsOnWhatNoLostWriteExplains(t *testing.T) {
	t.Parallel()
	r := &Report{Violations: []Violation{}}
	r.violate(violSeen201Missing, "key a")
	r.violate(violLostKeyCharge, "charge b")
	r.lostWrite(violContradiction, "key a: 201 x, then 201 y")
	r.lostWrite(violOrderNoMail, "order y")
	r.lostWrite(violSeen402HasOrder, "key c")
	if found, other := r.Loss(); found != 2 || other != 0 {
		t.Errorf("lost writes and what they explain: got found %d, other %d; want 2, 0", found, other)
	}
	if r.Passed() {
		t.Error("a report with violations a lost write explains passed: a synchronous run must fail on them")
	}
	r.violate(violContradiction, "key d: 201 x, then 402")
	r.violate(violOrderNoMail, "order z")
	r.violate(violServerError, "POST /api/orders")
	if found, other := r.Loss(); found != 2 || other != 3 {
		t.Errorf("with three unexplained: got found %d, other %d; want 2, 3", found, other)
	}
	for _, v := range r.Violations {
		if v.Kind == violContradiction && (v.Count != 2 || v.LostWrites != 1) {
			t.Errorf("contradictions: got %d, %d of them lost writes; want 2, 1", v.Count, v.LostWrites)
		}
	}
}
