package impl

import (
	"context"
	"errors"
	"sync"
	"time"
)

// renewFunc makes one renewal call of a lease: true if the TTL was
// extended, false if the key was gone or held another token, an error if
// the outcome is unknown. ctx bounds the call.
type renewFunc func(ctx context.Context) (bool, error)

// startRenewal runs renew every cfg.RenewEvery for lease on a goroutine
// under parent (counted in wg) until the lease is released (lease.stop,
// which it sets) or parent ends; it sets lease.Lost. Shared by watchdog
// and the redislock adapter's refresh loop.
func startRenewal(parent context.Context, wg *sync.WaitGroup, cfg Config, lease *Lease, renew renewFunc) {
	rctx, cancel := context.WithCancel(parent)
	lost := make(chan struct{})
	done := make(chan struct{})
	lease.Lost = lost
	lease.stop = func() { cancel(); <-done }
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		renewLoop(rctx, cfg, lease, lost, renew)
	}()
}

// renewLoop extends the lease's TTL every cfg.RenewEvery until ctx ends.
// Before each renewal it calls cfg.Hook at PointRenew (a paused client
// blocks there, so its renewal pauses too; ErrCrashed stops renewal without
// closing lost: a crashed client observes nothing). It closes lost when a
// renewal finds the key gone or owned by another token, or when renewals
// kept failing with an unknown outcome until TTL had passed since the last
// successful renewal's invoke (the key has expired by then). Each renewal
// call is bounded by RenewEvery and reported to cfg.OnRenew.
func renewLoop(ctx context.Context, cfg Config, lease *Lease, lost chan<- struct{}, renew renewFunc) {
	// deadline: when the key expires at the latest, on the client clock.
	deadline := lease.Start.Add(cfg.TTL)
	tick := time.NewTicker(cfg.RenewEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if cfg.Hook != nil {
			err := cfg.Hook(ctx, PointRenew)
			if errors.Is(err, ErrCrashed) || ctx.Err() != nil {
				return
			}
			if err != nil {
				// The hook failed otherwise: count it as a renewal with
				// an unknown outcome.
				if !cfg.Now().Before(deadline) {
					close(lost)
					return
				}
				continue
			}
		}
		invoke := cfg.Now()
		if !invoke.Before(deadline) {
			close(lost)
			return
		}
		cctx, cancel := context.WithTimeout(ctx, cfg.RenewEvery)
		ok, err := renew(cctx)
		cancel()
		if cfg.OnRenew != nil && ctx.Err() == nil {
			outcome := err
			if err == nil && !ok {
				outcome = ErrNotHeld
			}
			cfg.OnRenew(lease.Key, lease.Token, invoke, cfg.Now(), outcome)
		}
		switch {
		case err == nil && ok:
			deadline = invoke.Add(cfg.TTL)
		case err == nil:
			close(lost) // gone or owned by another token
			return
		case ctx.Err() != nil:
			return // released or closed meanwhile
		case !cfg.Now().Before(deadline):
			close(lost)
			return
		}
	}
}
