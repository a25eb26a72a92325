package idem

import "bytes"

// claimVerdict is what a claim decides about a key that exists already.
type claimVerdict int

const (
	// verdictMismatch: the key was used with another request (ErrMismatch).
	verdictMismatch claimVerdict = iota + 1
	// verdictReplay: the key is finished; its stored answer is replayed.
	verdictReplay
	// verdictInProgress: another attempt holds the key and its lease runs
	// (ErrInProgress).
	verdictInProgress
	// verdictTakeOver: the key is started and its lease ran out; the attempt
	// may take it over, under the row lock, with a new token.
	verdictTakeOver
	// verdictTooOld: as verdictTakeOver, but the key is older than the
	// store's ResumeWithin, so a claim leaves it to the completer
	// (ErrInProgress).
	verdictTooOld
	// verdictParked: as verdictTakeOver, but the completer parked the key
	// (Key.Parked): it is left to an operator, and a claim is told it is in
	// progress (ErrInProgress).
	verdictParked
)

// judge is the one rule a claim applies to a key that exists: stored is the
// key's fingerprint, fingerprint the request's, finished whether the key has
// its answer, and held whether its lease still runs by the database clock.
// Store.Claim applies it to the kit's table; a caller that keeps its keys in
// a table of its own applies it too, and may refuse a verdictTakeOver for reasons
// of its own (a downstream key too old to be resumed).
func judge(stored, fingerprint []byte, finished, held bool) claimVerdict {
	switch {
	case !bytes.Equal(stored, fingerprint):
		return verdictMismatch
	case finished:
		return verdictReplay
	case held:
		return verdictInProgress
	}
	return verdictTakeOver
}
