package idem

import "context"

type lockKey struct{}

// LockOf returns the lock a work runs under, from the context the work was
// given (Store.Do, Lock.Do, a Form's Submit, the adapters' Do and Handle),
// or the context of a request under an adapter's middleware; nil without
// one. Its Scope is what the application's Scope or Visitor returned, so the
// work need not compute it again; its OperationID names the operation for a
// downstream call's key.
func LockOf(ctx context.Context) *Lock {
	l, _ := ctx.Value(lockKey{}).(*Lock)
	return l
}

// WithLock returns ctx carrying l, for LockOf: the adapters' middleware
// hands the lock to the handler with it.
func WithLock(ctx context.Context, l *Lock) context.Context {
	return context.WithValue(ctx, lockKey{}, l)
}
