package handlers

import (
	"net/http"
	"time"
)

// Lifecycle is what the operations routes need: the published key policy and
// the metrics handler.
type Lifecycle struct {
	// Retention is how long a key is kept after its creation.
	Retention time.Duration
	// Metrics serves /metrics.
	Metrics http.Handler
}
