package idem

import "time"

// SinceStart makes a test's store as if it had started ago: its completer's
// hold-off after the store is made (see NewStore) is then over, as in a
// process that has been running for a while.
func SinceStart(s *Store, ago time.Duration) {
	s.asks.mu.Lock()
	defer s.asks.mu.Unlock()
	s.asks.downAt = time.Now().Add(-ago)
}

// UpPart is upPart, for migrations_test.
var UpPart = upPart

// Recall is recall, for answers_test.
func (s *Store) Recall(r Request) (Claim, bool, error) { return s.recall(r) }

// FlushHeldAsk writes an ask this store held in memory for ago, as a flush
// after an outage does (the ask noted ago, written now).
func FlushHeldAsk(s *Store, scope, key string, ago time.Duration) {
	s.asks.note(scope, key, false)
	s.asks.mu.Lock()
	defer s.asks.mu.Unlock()
	s.asks.pending[askKey{scope, key}] = time.Now().Add(-ago)
}
