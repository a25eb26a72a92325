package problem_test

import (
	"testing"

	"exactlyonce/internal/problem"
)

// Every kind the API answers with tells a client what to do on its page,
// and a kind answered with Retry-After says to retry with the same key.
func TestEveryKindHasAdvice(t *testing.T) {
	for _, k := range problem.Kinds {
		a, ok := k.Advice()
		if !ok || a.Do == "" || a.Retry.String() == "" {
			t.Errorf("%s: got no advice, want what a client should do", k.Slug)
			continue
		}
		if a.RetryAfter && a.Retry != problem.RetrySameKey {
			t.Errorf("%s: answered with Retry-After but got retry rule %v, want the same key", k.Slug, a.Retry)
		}
	}
}
