package app

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"exactlyonce/idem"
)

// DefaultRememberedAnswers is how many finished keys' answers a flow keeps
// in memory when Config.RememberedAnswers is zero: a few megabytes of
// receipts, enough for every key replayed within rememberFor at thousands
// of orders a second.
const DefaultRememberedAnswers = 10_000

// rememberFor is how long a finished answer is remembered. An answer never
// changes, so the lifetime only bounds how long a remembered answer can
// outlive its row once the sweeper deletes it (see idem.Answers).
const rememberFor = time.Minute

// rememberAnswers is the memory of finished answers for one key store
// (idem.Options.Answers): a bounded, expiring LRU cache, or nil for none.
func rememberAnswers(size int) idem.Answers {
	switch {
	case size < 0:
		return nil
	case size == 0:
		size = DefaultRememberedAnswers
	}
	return expirable.NewLRU[string, idem.Answer](size, nil, rememberFor)
}
