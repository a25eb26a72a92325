package chaos

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"exactlyonce/bench/chaos/history"
	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/internal/problem"
)

// The operator clients find the refund form's key in the page the admin
// listener renders with the kit's HiddenFields: the pattern must match
// that markup, or no operator refund is ever sent.
func TestFormKeyMatchesTheKitsFields(t *testing.T) {
	var b strings.Builder
	if err := idemhttp.HiddenFields(idem.FormKey{Key: "k-1", Sig: "s.2"}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	m := formKey.FindStringSubmatch(`<form method="post">` + b.String() + `<input name="amount"></form>`)
	if m == nil || m[1] != "k-1" || m[2] != "s.2" {
		t.Fatalf("got %q from %s, want the key k-1 and the signature s.2", m, b.String())
	}
}

// Each answer a refund request may get says what it says of its key; the
// admin listener's text answers are read as the API's problem types.
func TestRefundAnswersAreJudged(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		location    string
		want        refundAnswer
		wantProblem string
	}{
		{"a cancel's refund", 201, "application/json", `{"id":"r1"}`, "", refunded, ""},
		{"the operator's refund", 303, "", "", "/orders/o1?refund=refunded", refunded, ""},
		{"the provider refused the operator's", 303, "", "", "/orders/o1?refund=failed", failed, ""},
		{"the provider refused the cancel", 409, problem.ContentType, `{"type":"/problems/refund-refused"}`, "", failed, problem.RefundRefused.Type()},
		{"cancelled already", 409, problem.ContentType, `{"type":"/problems/order-cancelled"}`, "", refused, problem.OrderCancelled.Type()},
		{"more than is left, on the admin listener", 409, "text/plain; charset=utf-8", problem.RefundExceeds.Title + ": 12 is left.", "", refused, problem.RefundExceeds.Type()},
		{"pending, on the admin listener", 503, "text/plain; charset=utf-8", problem.RefundPending.Title + ": lost.", "", again, problem.RefundPending.Type()},
		{"in progress", 409, problem.ContentType, `{"type":"/problems/request-in-progress"}`, "", again, "/problems/request-in-progress"},
		{"a form the admin listener refuses", 400, "text/plain; charset=utf-8", "this form's key is missing", "", wrong, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
			if tc.contentType != "" {
				resp.Header.Set("Content-Type", tc.contentType)
			}
			if tc.location != "" {
				resp.Header.Set("Location", tc.location)
			}
			op := history.Op{Status: tc.status, Problem: answerProblem(shot{resp: resp, body: []byte(tc.body)}), Location: tc.location}
			if op.Problem != tc.wantProblem {
				t.Errorf("problem %q, want %q", op.Problem, tc.wantProblem)
			}
			if got := judgeRefundStatus(op); got != tc.want {
				t.Errorf("judged %d, want %d", got, tc.want)
			}
		})
	}
}
