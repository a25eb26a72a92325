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
