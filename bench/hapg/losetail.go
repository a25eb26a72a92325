package hapg

import (
	"context"
	"fmt"
	"time"
)

// LoseTail fails the formation over to a standby that lacks the primary's
// last lag of commits, the way a standby that lags when its primary dies
// would, and returns the new primary once it takes writes. Writers must
// keep committing while it runs: with Sync false the commits of the last
// lag are acknowledged by the primary and lost with it; with Sync true they
// wait for the standby and are never acknowledged, so nothing acknowledged
// is lost. Call it on a stable formation (WaitStable), whose standby
// streams and has every commit acknowledged so far. The old primary stays
// dead; StartNode brings it back as a standby, pg_rewind discarding the
// commits its new primary never had.
//
// The steps, and why each is needed:
//
//  1. Pause the standby's WAL receiver (SIGSTOP; every standby's, with
//     two). From then on what the
//     primary streams waits unread in the socket's buffers, and the standby
//     does not write it. Asynchronous, the primary goes on acknowledging
//     commits; synchronous, they wait for the standby's flush.
//  2. Sleep lag, while the writers commit: this is the tail.
//  3. Kill the primary's whole node (KillNode): nothing of it is left to
//     send the tail again, or to restart PostgreSQL before the monitor
//     acts.
//  4. Kill the paused WAL receiver (SIGKILL). Resumed instead, it reads
//     the tail from its socket's buffers, which outlive the primary, and
//     nothing is lost (measured: 0 of 5638 acknowledged commits); left
//     paused, it keeps the promotion from finishing (measured: the
//     standby still in stop_replication after 40 s), since recovery waits
//     for the receiver to exit. Killed, its socket goes with the unread
//     data. The standby's postmaster restarts its processes and recovers
//     from its own WAL, without the tail, and its next WAL receiver finds
//     no primary.
//  5. Wait: the monitor sees the primary fail and promotes the standby.
//     pg_auto_failover 2.0 promotes a lone standby whose last reported LSN
//     is within promote_wal_log_threshold of the primary's last reported
//     one (raised to 1 GB here: see promoteThreshold); it does not, and
//     cannot, know what the dead primary acknowledged after its last
//     report.
func (f *Formation) LoseTail(ctx context.Context, lag time.Duration) (*Node, error) {
	n, err := f.loseTail(ctx, lag)
	if err != nil {
		return nil, fmt.Errorf("lose tail: %w", err)
	}
	return n, nil
}

func (f *Formation) loseTail(ctx context.Context, lag time.Duration) (*Node, error) {
	primary, err := f.Primary(ctx)
	if err != nil {
		return nil, err
	}
	// Every standby's receiver, with two standbys: one left streaming would
	// confirm the tail, and the monitor would promote it.
	standbys := f.Others(primary)
	receivers := make([]int, len(standbys))
	for i, standby := range standbys {
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		receivers[i], err = standby.waitWALReceiver(wait)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	// The receivers waited for, paused and killed are the same processes:
	// not looked up again, as PauseWALReceiver and KillWALReceiver do.
	var resumes []func() error
	resumeAll := func() {
		for _, resume := range resumes {
			resume() //nolint:errcheck // the error that stopped LoseTail is the one to report
		}
	}
	for i, standby := range standbys {
		resume, err := standby.pauseWALReceiver(receivers[i])
		if err != nil {
			resumeAll()
			return nil, err
		}
		resumes = append(resumes, resume)
		f.logf("paused the WAL receiver of %s (pid %d) for %s", standby.name, receivers[i], lag)
	}
	select {
	case <-ctx.Done():
		resumeAll()
		return nil, ctx.Err()
	case <-time.After(lag):
	}
	if err := primary.KillNode(); err != nil {
		resumeAll()
		return nil, err
	}
	killed := time.Now()
	for i, standby := range standbys {
		if err := standby.killWALReceiver(receivers[i]); err != nil {
			return nil, err
		}
		f.logf("killed the paused WAL receiver of %s (pid %d)", standby.name, receivers[i])
	}
	next, err := f.waitNewPrimary(ctx, primary)
	if err != nil {
		return nil, err
	}
	f.logf("%s took writes %s after %s died", next.name, time.Since(killed).Round(time.Millisecond), primary.name)
	return next, nil
}
