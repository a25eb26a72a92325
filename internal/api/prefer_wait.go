package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"exactlyonce/internal/checkout"
)

// preferredWait is how long the client asked, with Prefer: wait=N (RFC 7240
// section 4.3), to be kept waiting for an order whose key another request
// holds, capped at checkout.MaxWait; zero when it did not ask. Without it a
// held key is answered at once with 409 request-in-progress and a
// Retry-After, as the IETF Idempotency-Key draft says, which every client
// understands; a client that would rather get the order in one round trip
// asks to wait. A wait it cannot read is no wait: a preference is a hint,
// never a reason to refuse the request (RFC 7240 section 2).
func preferredWait(h http.Header) time.Duration {
	for _, v := range h.Values("Prefer") {
		for pref := range strings.SplitSeq(v, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(pref), "=")
			if !strings.EqualFold(strings.TrimSpace(name), "wait") {
				continue
			}
			value, _, _ = strings.Cut(value, ";")
			n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(value), `"`))
			if err != nil || n <= 0 {
				return 0
			}
			return min(time.Duration(n)*time.Second, checkout.MaxWait)
		}
	}
	return 0
}

// applyWait reads the client's wait preference and, when it asked for one,
// says so in Preference-Applied with the wait it will get.
func applyWait(req http.Header, resp http.Header) time.Duration {
	wait := preferredWait(req)
	if wait > 0 {
		resp.Set("Preference-Applied", "wait="+strconv.Itoa(int(wait/time.Second)))
	}
	return wait
}
