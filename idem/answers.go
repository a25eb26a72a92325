package idem

import "time"

// Answers remembers finished keys in this process, so that a replay costs
// no round trip to the database. It is safe because a finished key is
// final: its fingerprint and its response never change again, and the
// sweeper is the only writer that touches the row after the finish (it
// deletes it, past the retention). Nothing else is ever remembered: a
// started key changes hands, so every claim of one goes to the database.
//
// A bounded, expiring LRU cache fits it as it is; the shop passes
// hashicorp/golang-lru's expirable.LRU[string, idem.Answer], with its
// entries' lifetime as Options.AnswersFor. A key is remembered only while
// it is younger than Options.Retention minus that lifetime, so every entry
// expires before the sweeper may delete its row: a key used again after the
// sweep is a new operation, and is never answered with the old one's
// answer. Each process has its own memory; as the answers never change,
// they need no invalidation.
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

// recall answers r from what this process remembers: a replay, or
// ErrMismatch for another fingerprint. ok is false when the store
// remembers nothing of the key (or has no Options.Answers), and the claim
// must go to the database. A caller with a claim statement of its own calls
// it before sending that statement.
func (s *Store) recall(r Request) (c Claim, ok bool, err error) {
	if s.answers == nil {
		return Claim{}, false, nil
	}
	a, ok := s.answers.Get(answerKey(r.Scope, r.Key))
	if !ok {
		return Claim{}, false, nil
	}
	k := Key{Fingerprint: a.Fingerprint, Finished: true, Answer: a.Response}
	c, err = s.answer(s.verdict(k, r), k)
	return c, true, err
}

// rememberMargin covers the time between a claim's read of a key's age and
// the moment its answer is added to the memory, and the two clocks (the
// database's, which the age and the sweep use, and this process's, which
// the entries' lifetime uses).
const rememberMargin = time.Second

// remember keeps a finished key's answer, read from the database by a claim,
// unless its entry could outlive the row (see Options.AnswersFor). The age
// is counted from the key's creation, which is no later than its finish,
// from which the sweeper counts the retention: the rule errs on the safe
// side.
func (s *Store) remember(r Request, k Key) {
	if s.answers == nil || !k.Finished || k.Age >= s.rememberWhile {
		return
	}
	s.answers.Add(answerKey(r.Scope, r.Key), Answer{Fingerprint: k.Fingerprint, Response: k.Answer})
}
