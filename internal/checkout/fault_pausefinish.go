//go:build fault_pausefinish

package checkout

import (
	"context"
	"sync/atomic"
	"time"
)

// A fault, not a mutation: every eighth attempt that has the provider's
// answer pauses for pauseBeforeFinish before its finish statement, as a
// process paused there (a long GC pause, a frozen VM) would. That is the
// one moment the finish's fence is for, and the moment a SIGSTOP from
// outside almost never lands on: an attempt paused anywhere else is turned
// away earlier, by its own lease keeper or by the lease its intent's store
// renewed (docs/analysis.md). The pause outlasts the lease and a client's
// timeout, so that the client's retry takes the key over and finishes it
// first. A shop built with this fault alone keeps every promise: the fence
// turns the paused attempt away (make chaos/fault/pausefinish).
func init() {
	var attempts atomic.Int64
	mutations = append(mutations, mutation{config: func(cfg *Config) {
		cfg.Hooks.BeforeFinish = func(ctx context.Context, _ Claimed) {
			if attempts.Add(1)%8 != 0 {
				return
			}
			select {
			case <-time.After(pauseBeforeFinish):
			case <-ctx.Done():
			}
		}
	}})
}

// pauseBeforeFinish is past the chaos runs' lease (3 s) and their clients'
// timeout (5 s), with time for the retry to finish the key.
const pauseBeforeFinish = 8 * time.Second
