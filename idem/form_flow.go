package idem

import (
	"context"
	"errors"
	"time"
)

// DefaultWait is how long a request waits for another request holding its
// key (the first click of a double click, a client's retry racing its
// original) before it is told ErrInProgress: long enough for most work to
// finish, so that the second request gets the first's answer rather than
// a 409, and far below any client's timeout.
const DefaultWait = 3 * time.Second

// DefaultFormTTL is how long a minted form key is accepted: a form left
// open for an hour is refused and rendered again, with a new key.
const DefaultFormTTL = time.Hour

// waitOf is a configured wait with the kit's defaults: zero is DefaultWait,
// less than zero no wait at all.
func waitOf(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultWait
	case d < 0:
		return 0
	}
	return d
}

// FormOptions configure a Form.
type FormOptions struct {
	// Store keeps the form's keys. Required.
	Store *Store
	// Secret signs the keys the form carries, so that a visitor cannot
	// forge one or carry one to another visitor; at least 32 bytes, the
	// same on every instance. Required.
	Secret []byte
	// Version names what the form shows (its choices, its prices): a key
	// minted for one version is refused by another, so a form rendered
	// before a change cannot be submitted after it. Default "".
	Version string
	// TTL is how long a minted key is accepted; default DefaultFormTTL.
	// Keep it below the sweeper's retention: a key older than that may
	// have lost its stored answer.
	TTL time.Duration
	// Wait is how long a submit waits for another submit of its key;
	// default DefaultWait, less than zero not at all.
	Wait time.Duration
}

// Form is the framework-neutral side of one protected HTML form: it mints
// the key the form carries when it is rendered (bound to the visitor and
// the form's version), and runs a submission's work at most once per key.
// The HTTP adapters (idemhttp, idemecho) turn its answers into redirects,
// processing pages and refusals.
type Form struct {
	store   *Store
	keys    *Forms
	version string
	wait    time.Duration
}

// ErrShortSecret means FormOptions.Secret is missing or shorter than 32
// bytes.
var ErrShortSecret = errors.New("idem: a form's Secret must be at least 32 bytes")

// NewForm returns the form described by o.
func NewForm(o FormOptions) (*Form, error) {
	if o.Store == nil {
		return nil, errors.New("idem: FormOptions.Store is required")
	}
	if len(o.Secret) < 32 {
		return nil, ErrShortSecret
	}
	if o.TTL <= 0 {
		o.TTL = DefaultFormTTL
	}
	return &Form{store: o.Store, keys: NewForms(o.Secret, o.TTL), version: o.Version, wait: waitOf(o.Wait)}, nil
}

// Mint returns a new key for visitor, to render into the form (HiddenFields
// in the adapters).
func (f *Form) Mint(visitor string) FormKey { return f.keys.Mint(visitor, f.version) }

// Submit verifies the key a form came back with and runs work at most once
// for it (Store.Do): fields are what the visitor submitted, in a fixed
// order, and the same key with other fields is refused with ErrMismatch. A
// key minted for another visitor or version, or too long ago, fails with one
// of the ErrFormKey errors; a key another submit still holds after the wait
// fails with ErrInProgress, for the adapter's processing page.
func (f *Form) Submit(ctx context.Context, visitor string, k FormKey, fields []string, work Work) (Outcome, error) {
	if err := f.keys.Verify(visitor, f.version, k); err != nil {
		return Outcome{}, err
	}
	return f.store.Do(ctx, Request{Scope: visitor, Key: k.Key, Fingerprint: f.fingerprint(fields)}, f.wait, work)
}

// fingerprint is the kit's rule for a form: its version and its fields.
func (f *Form) fingerprint(fields []string) []byte {
	parts := make([][]byte, 0, len(fields)+1)
	parts = append(parts, []byte(f.version))
	for _, field := range fields {
		parts = append(parts, []byte(field))
	}
	return Fingerprint(parts...)
}

// Status is what a submission whose wait ran out finds when it asks again:
// the stored answer once the key is finished, an *InProgressError while it
// runs, ErrNotFound when nothing was stored under it (its work was refused
// and the key released, or it never existed).
func (f *Form) Status(ctx context.Context, visitor, key string) (Response, error) {
	if CheckKey(key) != nil {
		return Response{}, ErrNotFound
	}
	return f.store.Get(ctx, visitor, key)
}
