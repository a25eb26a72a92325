package idemcheck

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"exactlyonce/client"
)

func pass(id, title, detail string) Result {
	return Result{ID: id, Title: title, Outcome: Passed, Detail: detail}
}

func fail(id, title, detail string) Result {
	return Result{ID: id, Title: title, Outcome: Failed, Detail: detail}
}

func skip(id, title, detail string) Result {
	return Result{ID: id, Title: title, Outcome: Skipped, Detail: detail}
}

// want400 sends a valid body with a bad key header and expects a 400.
func (c *Checker) want400(ctx context.Context, id, title string, key keyValue) []Result {
	if !c.wants(id) {
		return []Result{skip(id, title, "")}
	}
	r := c.send(ctx, c.creds[0], key, c.body(1))
	if r.Err == nil && r.Status == http.StatusBadRequest {
		return []Result{pass(id, title, r.String())}
	}
	return []Result{fail(id, title, "got "+r.String()+", want 400")}
}

func (c *Checker) missingKey(ctx context.Context) []Result {
	return c.want400(ctx, MissingKey, "no key → 400", nil)
}

// malformedKey sends an unterminated Structured Field string: malformed
// under the draft's grammar, and unlike a control character it survives
// every HTTP stack on the way.
func (c *Checker) malformedKey(ctx context.Context) []Result {
	return c.want400(ctx, MalformedKey, "malformed key → 400", raw(`"unterminated`))
}

func (c *Checker) oversizedKey(ctx context.Context) []Result {
	return c.want400(ctx, OversizedKey, "key of 256 characters → 400", c.key(strings.Repeat("k", 256)))
}

// replay sends one request twice with one key and answers three scenarios
// from the pair: the same result, marked as a replay, with its headers.
func (c *Checker) replay(ctx context.Context) []Result {
	const (
		tReplay  = "same key, same request → same status and body, executed once"
		tMarker  = "a replay is marked Idempotent-Replayed: true"
		tHeaders = "a replay keeps Location and Content-Type"
	)
	key := c.key(newKey())
	first := c.send(ctx, c.creds[0], key, c.body(1))
	if !first.success() {
		d := "first request: got " + first.String() + ", want 2xx"
		return []Result{fail(Replay, tReplay, d), fail(ReplayMarker, tMarker, d), fail(ReplayHeaders, tHeaders, d)}
	}
	second := c.send(ctx, c.creds[0], key, c.body(1))

	var out []Result
	id1, id2 := c.resourceID(first), c.resourceID(second)
	switch {
	case second.Err != nil || second.Status != first.Status:
		out = append(out, fail(Replay, tReplay, fmt.Sprintf("first %d, replay %s", first.Status, second)))
	case !sameBody(first.Body, second.Body):
		out = append(out, fail(Replay, tReplay, fmt.Sprintf("bodies differ: first %s, replay %s", first, second)))
	case id1 == "":
		out = append(out, fail(Replay, tReplay, "no resource id in the response (check the id pointer)"))
	case id1 != id2:
		out = append(out, fail(Replay, tReplay, fmt.Sprintf("two executions: %s and %s", id1, id2)))
	default:
		out = append(out, pass(Replay, tReplay, fmt.Sprintf("%d twice, one resource %s", first.Status, id1)))
	}

	switch {
	case first.replayed():
		out = append(out, fail(ReplayMarker, tMarker, "the first response is marked as a replay too"))
	case !second.replayed():
		out = append(out, fail(ReplayMarker, tMarker, fmt.Sprintf("replay has Idempotent-Replayed %q", second.Header.Get("Idempotent-Replayed"))))
	default:
		out = append(out, pass(ReplayMarker, tMarker, "Idempotent-Replayed: true on the replay only"))
	}

	var problems []string
	for _, h := range []string{"Location", "Content-Type"} {
		if a, b := first.Header.Get(h), second.Header.Get(h); a != b {
			problems = append(problems, fmt.Sprintf("%s %q, then %q", h, a, b))
		}
	}
	if len(problems) > 0 {
		out = append(out, fail(ReplayHeaders, tHeaders, strings.Join(problems, "; ")))
	} else {
		out = append(out, pass(ReplayHeaders, tHeaders, fmt.Sprintf("Location %q, Content-Type %q", first.Header.Get("Location"), first.Header.Get("Content-Type"))))
	}
	return out
}

func (c *Checker) fingerprint(ctx context.Context) []Result {
	title := "same key, other body → " + statuses(c.profile.MismatchStatus) + ", not executed"
	if !c.wants(Fingerprint) {
		return []Result{skip(Fingerprint, title, "")}
	}
	key := c.key(newKey())
	first := c.send(ctx, c.creds[0], key, c.body(1))
	if !first.success() {
		return []Result{fail(Fingerprint, title, "first request: got "+first.String()+", want 2xx")}
	}
	other := c.send(ctx, c.creds[0], key, c.body(2))
	if other.Err == nil && slices.Contains(c.profile.MismatchStatus, other.Status) {
		return []Result{pass(Fingerprint, title, other.String())}
	}
	return []Result{fail(Fingerprint, title, fmt.Sprintf("got %s, want %s", other, statuses(c.profile.MismatchStatus)))}
}

// concurrent sends Concurrency duplicates at once, then asks once more
// (after any 409, honouring Retry-After) for the settled result, and counts
// distinct resource ids among every success.
func (c *Checker) concurrent(ctx context.Context) []Result {
	n := c.cfg.Concurrency
	title := fmt.Sprintf("%d concurrent duplicates → one execution, the rest 409 or replays, no 5xx", n)
	key := c.key(newKey())
	body := c.body(1)

	responses := make([]response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range responses {
		wg.Go(func() {
			<-start
			responses[i] = c.send(ctx, c.creds[0], key, body)
		})
	}
	close(start)
	wg.Wait()

	ids := map[string]bool{}
	var bad []string
	statuses := map[int]int{}
	for _, r := range responses {
		statuses[r.Status]++
		switch {
		case r.Err != nil || r.Status >= 500:
			bad = append(bad, r.String())
		case r.success():
			ids[c.resourceID(r)] = true
		case r.Status != http.StatusConflict:
			bad = append(bad, r.String())
		}
	}
	settled := c.settle(ctx, key, body)
	if settled.success() {
		ids[c.resourceID(settled)] = true
	} else {
		bad = append(bad, "settled: "+settled.String())
	}
	delete(ids, "")
	seen := fmt.Sprintf("statuses %v, then %d; %d distinct resources", statuses, settled.Status, len(ids))
	switch {
	case len(bad) > 0:
		return []Result{fail(Concurrent, title, seen+"; unexpected: "+strings.Join(bad, "; "))}
	case len(ids) != 1:
		return []Result{fail(Concurrent, title, seen+", want 1")}
	}
	return []Result{pass(Concurrent, title, seen)}
}

// settle retries a request until it is no longer 409, as a client would,
// sleeping Retry-After (capped at 2 s) between tries, for at most a minute.
func (c *Checker) settle(ctx context.Context, key keyValue, body string) response {
	deadline := time.Now().Add(time.Minute)
	for {
		r := c.send(ctx, c.creds[0], key, body)
		if r.Err != nil || r.Status != http.StatusConflict || time.Now().After(deadline) {
			return r
		}
		wait := 200 * time.Millisecond
		if d := client.RetryAfter(r.Header, time.Now()); d > 0 {
			wait = min(d, 2*time.Second)
		}
		select {
		case <-ctx.Done():
			return response{Err: ctx.Err()}
		case <-time.After(wait):
		}
	}
}

func (c *Checker) scoping(ctx context.Context) []Result {
	const title = "two callers, one key → two executions"
	if !c.wants(Scoping) {
		return []Result{skip(Scoping, title, "")}
	}
	if len(c.creds) < 2 {
		return []Result{fail(Scoping, title, "needs two credentials (or a register config); have one")}
	}
	key := c.key(newKey())
	a := c.send(ctx, c.creds[0], key, c.body(1))
	b := c.send(ctx, c.creds[1], key, c.body(1))
	idA, idB := c.resourceID(a), c.resourceID(b)
	switch {
	case !a.success() || !b.success():
		return []Result{fail(Scoping, title, fmt.Sprintf("got %s and %s, want two 2xx", a, b))}
	case b.replayed() || idA == idB:
		return []Result{fail(Scoping, title, fmt.Sprintf("the second caller got the first caller's result (%s)", idA))}
	}
	return []Result{pass(Scoping, title, fmt.Sprintf("resources %s and %s", idA, idB))}
}

func (c *Checker) reuseAfterValidationError(ctx context.Context) []Result {
	const title = "a key rejected by validation (4xx) can be used again"
	if !c.wants(ReuseAfter4xx) {
		return []Result{skip(ReuseAfter4xx, title, "")}
	}
	if c.cfg.InvalidBody == "" {
		return []Result{skip(ReuseAfter4xx, title, "no invalid_body configured")}
	}
	key := c.key(newKey())
	invalid := c.send(ctx, c.creds[0], key, c.cfg.InvalidBody)
	if invalid.Err != nil || invalid.Status < 400 || invalid.Status >= 500 {
		return []Result{fail(ReuseAfter4xx, title, "invalid body: got "+invalid.String()+", want 4xx")}
	}
	valid := c.send(ctx, c.creds[0], key, c.body(1))
	if !valid.success() || valid.replayed() {
		return []Result{fail(ReuseAfter4xx, title, fmt.Sprintf("after %d, the valid request got %s, want a fresh 2xx", invalid.Status, valid))}
	}
	return []Result{pass(ReuseAfter4xx, title, fmt.Sprintf("%d, then %d", invalid.Status, valid.Status))}
}

func (c *Checker) retentionPolicy(ctx context.Context) []Result {
	const title = "the key retention policy is published"
	if !c.wants(RetentionPolicy) {
		return []Result{skip(RetentionPolicy, title, "")}
	}
	if c.cfg.PolicyPath == "" {
		return []Result{fail(RetentionPolicy, title, "no policy_path configured: publish the retention where clients can read it")}
	}
	r := c.do(ctx, http.MethodGet, c.cfg.PolicyPath, c.creds[0], nil, "")
	if r.Err != nil || r.Status != http.StatusOK {
		return []Result{fail(RetentionPolicy, title, "GET "+c.cfg.PolicyPath+": "+r.String())}
	}
	v, err := pointer(r.Body, c.cfg.RetentionPointer)
	if err != nil {
		return []Result{fail(RetentionPolicy, title, err.Error())}
	}
	secs, err := strconv.ParseFloat(fmt.Sprint(v), 64)
	if err != nil || secs <= 0 {
		return []Result{fail(RetentionPolicy, title, fmt.Sprintf("retention %v is not a positive number of seconds", v))}
	}
	return []Result{pass(RetentionPolicy, title, fmt.Sprintf("%s: keys kept %s", c.cfg.PolicyPath, time.Duration(secs*float64(time.Second))))}
}

func statuses(codes []int) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, " or ")
}
