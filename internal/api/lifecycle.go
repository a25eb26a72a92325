package api

import "time"

// Lifecycle is what the operations routes need: the published key policy.
// The metrics are not served here but on the admin address (app.Admin), so
// that the public address never exposes them.
type Lifecycle struct {
	// Retention is how long a key is kept after its creation.
	Retention time.Duration
}
