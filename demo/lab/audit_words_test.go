package lab

import "testing"

func TestDetailWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, "—"},
		{`{"status": 201, "order_id": "0193a1b2-0000-7000-8000-00000000abcd", "traceparent": "00-abc-def-01"}`,
			"answered 201 · order 0000abcd"},
		{`{"by": "completer", "attempt": 2, "locked_until": "not a time"}`, "by the completer · attempt 2 · lock until not a time"},
		{`{"amount": 1200, "currency": "eur", "payment_intent_id": "pi_1"}`, "charge pi_1 · amount 1200 EUR"},
		{`{"outcome": "not_completed", "some_field": true}`, "not completed · some field true"},
		{`not json`, "not json"},
	} {
		if got := detailWords(c.in); got != c.want {
			t.Errorf("detailWords(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}
