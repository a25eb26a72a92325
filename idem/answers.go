package idem

// Answers remembers finished keys in this process, so that a replay costs
// no round trip to the database. It is safe because a finished key is
// final: its fingerprint and its response never change again, and the
// sweeper is the only writer that touches the row after the finish (it
// deletes it, past the retention). Nothing else is ever remembered: a
// started key changes hands, so every claim of one goes to the database.
//
// A bounded, expiring LRU cache fits it as it is; the shop passes
// hashicorp/golang-lru's expirable.LRU[string, idem.Answer]. Keep the
// entries' lifetime short (a minute) next to the retention: a remembered
// answer can outlive its row by that long, replaying a key the sweeper has
// just deleted instead of treating it as new, which is harmless (the key is
// past its retention either way) but should stay brief. Each process has
// its own memory; as the answers never change, they need no invalidation.
type Answers interface {
	Get(key string) (Answer, bool)
	Add(key string, a Answer) (evicted bool)
}

// Answer is a finished key as Answers remembers it: enough to replay it or
// to refuse a request with another fingerprint.
type Answer struct {
	Fingerprint []byte
	Response    Response
}

// answerKey is where a key's answer is remembered: scope and key, which
// are unique together (the table's primary key), so one scope never sees
// another's answer. PostgreSQL's text cannot hold a NUL byte, so no stored
// scope or key contains the separator and no two pairs share a string.
func answerKey(scope, key string) string { return scope + "\x00" + key }

// Recall answers r from what this process remembers: a replay, or
// ErrMismatch for another fingerprint. ok is false when the store
// remembers nothing of the key (or has no Options.Answers), and the claim
// must go to the database. A caller with a claim statement of its own calls
// it before sending that statement.
func (s *Store) Recall(r Request) (c Claim, ok bool, err error) {
	if s.answers == nil {
		return Claim{}, false, nil
	}
	a, ok := s.answers.Get(answerKey(r.Scope, r.Key))
	if !ok {
		return Claim{}, false, nil
	}
	c, err = s.answer(Key{Fingerprint: a.Fingerprint, Finished: true, Answer: a.Response}, r.Fingerprint)
	return c, true, err
}

// remember keeps a finished key's answer, read from the database by a claim.
func (s *Store) remember(r Request, k Key) {
	if s.answers == nil || !k.Finished {
		return
	}
	s.answers.Add(answerKey(r.Scope, r.Key), Answer{Fingerprint: k.Fingerprint, Response: k.Answer})
}
