package chaos

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// noAnswer names, among the statuses, a request that got no answer at all:
// refused, reset, cut off, or timed out by the client.
const noAnswer = "none"

// answerCounts counts the answers the clients got: by status, and the
// 4xx and 5xx answers with a problem+json body by status and problem type,
// so that a run says which 503s were the database and which the provider.
type answerCounts struct {
	statuses map[string]int // "201", "503", "none"
	problems map[string]int // "503 /problems/service-unavailable"
}

func newAnswerCounts() answerCounts {
	return answerCounts{statuses: map[string]int{}, problems: map[string]int{}}
}

// add counts one answer; resp is nil when there was none, and body is the
// answer's body, read whole.
func (a answerCounts) add(resp *http.Response, body []byte) {
	if resp == nil {
		a.statuses[noAnswer]++
		return
	}
	a.statuses[strconv.Itoa(resp.StatusCode)]++
	if t, ok := problemType(resp, body); ok {
		a.problems[strconv.Itoa(resp.StatusCode)+" "+t]++
	}
}

// problemType is the type of a 4xx or 5xx answer's problem+json body, and
// whether it has one. A problem body without a type is about:blank, as
// RFC 9457 says.
func problemType(resp *http.Response, body []byte) (string, bool) {
	if resp.StatusCode < 400 {
		return "", false
	}
	media, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || media != "application/problem+json" {
		return "", false
	}
	var p struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return "", false
	}
	if p.Type == "" {
		return "about:blank", true
	}
	return p.Type, true
}

// answersLine is the counts in a few words, statuses in order with "none"
// last, each with its problem types: "201 × 90, 503 × 7 (service-unavailable
// 5, provider-unavailable 2), none × 3".
func answersLine(statuses, problems map[string]int) string {
	codes := make([]string, 0, len(statuses))
	for s := range statuses {
		codes = append(codes, s)
	}
	// Numeric statuses sort as numbers; "none" (no number) goes last.
	slices.SortFunc(codes, func(a, b string) int {
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		switch {
		case errA != nil && errB != nil:
			return strings.Compare(a, b)
		case errA != nil:
			return 1
		case errB != nil:
			return -1
		}
		return x - y
	})
	parts := make([]string, 0, len(codes))
	for _, code := range codes {
		part := fmt.Sprintf("%s × %d", code, statuses[code])
		var kinds []string
		for k, n := range problems {
			status, t, _ := strings.Cut(k, " ")
			if status == code {
				kinds = append(kinds, fmt.Sprintf("%s %d", strings.TrimPrefix(t, "/problems/"), n))
			}
		}
		if len(kinds) > 0 {
			slices.Sort(kinds)
			part += " (" + strings.Join(kinds, ", ") + ")"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "no answers"
	}
	return strings.Join(parts, ", ")
}
