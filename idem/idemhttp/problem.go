package idemhttp

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"

	"exactlyonce/idem"
)

// problemTypeBase prefixes a refusal's slug into its problem type (RFC 9457),
// as WriteError writes it: "/problems/idempotency-key-reused".
const problemTypeBase = "/problems/"

// WriteError answers err as problem+json: a refusal of the kit with its
// status, slug and Retry-After (idem.RefusalOf; a body over the limit is
// 413; a Scope's idem.ScopeError its own status), and anything else with a
// 500 that says nothing of the error (Keys' default Refuse logs it first; a
// handler that calls this one for its own errors logs them itself).
func WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	ref, ok := idem.RefusalOf(err)
	if !ok {
		ref = idem.Refusal{Status: http.StatusInternalServerError, Slug: "internal", Title: "Internal error",
			Detail: "something went wrong on the server; retrying with the same Idempotency-Key is safe"}
	}
	if ref.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ref.RetryAfter.Seconds()))))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(ref.Status)
	json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck // the client went away
		"type": problemTypeBase + ref.Slug, "title": ref.Title, "status": ref.Status, "detail": ref.Detail,
	})
}
