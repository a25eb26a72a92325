package idem

import "bytes"

// Verdict is what a claim decides about a key that exists already.
type Verdict int

const (
	// VerdictMismatch: the key was used with another request (ErrMismatch).
	VerdictMismatch Verdict = iota + 1
	// VerdictReplay: the key is finished; its stored answer is replayed.
	VerdictReplay
	// VerdictInProgress: another attempt holds the key and its lease runs
	// (ErrInProgress).
	VerdictInProgress
	// VerdictTakeOver: the key is started and its lease ran out; the attempt
	// may take it over, under the row lock, with a new token.
	VerdictTakeOver
	// VerdictTooOld: as VerdictTakeOver, but the key is older than the
	// store's ResumeWithin, so a claim leaves it to the completer
	// (ErrInProgress).
	VerdictTooOld
	// VerdictParked: as VerdictTakeOver, but the completer parked the key
	// (Key.Parked): it is left to an operator, and a claim is told it is in
	// progress (ErrInProgress).
	VerdictParked
)

// Judge is the one rule a claim applies to a key that exists: stored is the
// key's fingerprint, fingerprint the request's, finished whether the key has
// its answer, and held whether its lease still runs by the database clock.
// Store.Claim applies it to the kit's table; a caller that keeps its keys in
// a table of its own applies it too, and may refuse a VerdictTakeOver for reasons
// of its own (a downstream key too old to be resumed).
func Judge(stored, fingerprint []byte, finished, held bool) Verdict {
	switch {
	case !bytes.Equal(stored, fingerprint):
		return VerdictMismatch
	case finished:
		return VerdictReplay
	case held:
		return VerdictInProgress
	}
	return VerdictTakeOver
}
