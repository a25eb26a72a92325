package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"exactlyonce/internal/payment"
)

// watch decides about an intent of this deployment that can still succeed,
// met in the provider's list: the cursor passes it, so an intent whose
// success could still come, and whose success could still need a refund,
// goes on the watch list, which every pass reads again by id (passWatched).
// Such is one whose key is still started (a retry or the completer may
// confirm it), one still processing at the provider, and one whose key row
// is gone (a confirm sent under the lost key's lease may still land). One
// whose key finished without it never charges: the engine confirms only
// under a started key's lease, and the key's answer is written after.
func (r *Reconciler) watch(ctx context.Context, in payment.Intent) (string, error) {
	m, err := r.db.MatchIntent(ctx, MatchParams(in))
	if err != nil {
		return "", fmt.Errorf("match intent: %w", err)
	}
	if in.Status != payment.StatusProcessing && m.KeyStatus != "started" && (m.KeyStatus != "" || !m.Ours) {
		return reconciledNotSucceeded, nil
	}
	if err := r.db.WatchIntent(ctx, in.ID); err != nil {
		return "", fmt.Errorf("watch intent: %w", err)
	}
	return reconciledWatched, nil
}

// passWatched reads the watched intents again by id, the least recently
// read first and at most a page of them per pass, and settles each: a
// succeeded one as the list's are (refunded when no order holds it and
// none will), until it needs no further look; one canceled, or whose key
// finished without it, leaves the list.
func (r *Reconciler) passWatched(ctx context.Context, out *Reconciled, deployment string) error {
	watched, err := r.db.WatchedIntents(ctx, int32(r.cfg.PageSize))
	if err != nil {
		return fmt.Errorf("reconciler: watched intents: %w", err)
	}
	for _, w := range watched {
		in, err := r.provider.RetrieveIntent(ctx, w.PaymentIntentID)
		var refused *payment.ProviderError
		switch {
		case errors.As(err, &refused) && refused.Code == "resource_missing":
			// Not at this provider (a database restored beside another
			// account): nothing here can succeed.
			err = r.db.UnwatchIntent(ctx, w.PaymentIntentID)
		case err != nil:
			return fmt.Errorf("reconciler: watched intent %s: %w", w.PaymentIntentID, err)
		default:
			err = r.settleWatched(ctx, out, in, deployment, seconds(w.WatchedForSeconds))
		}
		if err != nil {
			return fmt.Errorf("reconcile watched intent %s: %w", w.PaymentIntentID, err)
		}
	}
	return nil
}

// settleWatched examines a watched intent read again, and keeps it on the
// list or takes it off.
func (r *Reconciler) settleWatched(ctx context.Context, out *Reconciled, in payment.Intent, deployment string, watchedFor time.Duration) error {
	keep := false
	switch {
	case in.Status == payment.StatusSucceeded:
		result, err := r.reconcile(ctx, in, deployment)
		if err != nil {
			return err
		}
		r.count(out, result)
		keep = holdsCursor(result)
	case payment.CanStillSucceed(in.Status):
		m, err := r.db.MatchIntent(ctx, MatchParams(in))
		if err != nil {
			return fmt.Errorf("match intent: %w", err)
		}
		// A lost key's intent is kept for LostAfter: a confirm sent under
		// the key's lease before the loss lands within it.
		keep = in.Status == payment.StatusProcessing || m.KeyStatus == "started" ||
			m.KeyStatus == "" && m.Ours && watchedFor < r.cfg.LostAfter
	}
	if keep {
		return r.db.CheckedWatchedIntent(ctx, in.ID)
	}
	return r.db.UnwatchIntent(ctx, in.ID)
}
