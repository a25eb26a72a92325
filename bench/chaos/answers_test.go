package chaos

import (
	"net/http"
	"testing"
)

func answer(status int, contentType, body string) (*http.Response, []byte) {
	resp := &http.Response{StatusCode: status, Header: http.Header{}}
	if contentType != "" {
		resp.Header.Set("Content-Type", contentType)
	}
	return resp, []byte(body)
}

// TestAnswerCountsByStatusAndProblem: every answer counts under its status
// (none for no answer); a 4xx or 5xx with a problem+json body counts under
// its type too, and nothing else does.
func TestAnswerCountsByStatusAndProblem(t *testing.T) {
	t.Parallel()
	a := newAnswerCounts()
	a.add(answer(201, "application/json", `{"order_id":"x","type":"ignored"}`))
	a.add(answer(503, "application/problem+json", `{"status":503,"type":"/problems/service-unavailable"}`))
	a.add(answer(503, "application/problem+json; charset=utf-8", `{"status":503,"type":"/problems/service-unavailable"}`))
	a.add(answer(503, "application/problem+json", `{"status":503,"type":"/problems/provider-unavailable"}`))
	a.add(answer(502, "text/plain", `Bad Gateway`))
	a.add(answer(409, "application/problem+json", `{"status":409}`))
	a.add(answer(400, "application/problem+json", `not json`))
	a.add(nil, nil)

	for status, want := range map[string]int{"201": 1, "503": 3, "502": 1, "409": 1, "400": 1, noAnswer: 1} {
		if got := a.statuses[status]; got != want {
			t.Errorf("status %s: got %d, want %d", status, got, want)
		}
	}
	wantProblems := map[string]int{
		"503 /problems/service-unavailable":  2,
		"503 /problems/provider-unavailable": 1,
		"409 about:blank":                    1,
	}
	if len(a.problems) != len(wantProblems) {
		t.Errorf("got problems %v, want %v", a.problems, wantProblems)
	}
	for k, want := range wantProblems {
		if got := a.problems[k]; got != want {
			t.Errorf("problem %s: got %d, want %d", k, got, want)
		}
	}

	got := answersLine(a.statuses, a.problems)
	want := "201 × 1, 400 × 1, 409 × 1 (about:blank 1), 502 × 1, 503 × 3 (provider-unavailable 1, service-unavailable 2), none × 1"
	if got != want {
		t.Errorf("got line\n%s\nwant\n%s", got, want)
	}
	if got := answersLine(nil, nil); got != "no answers" {
		t.Errorf("no answers: got %q", got)
	}
}
