package impl

import (
	"context"
	"errors"
	"sync"
	"time"
)

// renewFunc makes one renewal call of a lease: nil if the TTL was
// extended, an error wrapping ErrNotHeld if the key was gone or held
// another token (it may carry a Reason), another error if the outcome is
// unknown. ctx bounds the call. validity, when positive, is how long the
// lock says the lease stays valid from the call's return (a protocol-2
// extend reply's validity_ms): the renewal moves the lease's validity
// deadline there (Lease.ValidUntil).
type renewFunc func(ctx context.Context) (validity time.Duration, err error)

// startRenewal runs renew every cfg.RenewEvery for lease on a goroutine
// under parent (counted in wg) until the lease is released (lease.stop,
// which it sets) or parent ends; it sets lease.Lost. Shared by watchdog,
// the redislock adapter's refresh loop and adapters' lockbench-driven
// extends (driven: each call is announced at PointExtend and runs under
// cfg.CallContext).
func startRenewal(parent context.Context, wg *sync.WaitGroup, cfg Config, lease *Lease, renew renewFunc, driven bool) {
	rctx, cancel := context.WithCancel(parent)
	lost := make(chan struct{})
	done := make(chan struct{})
	lease.Lost = lost
	lease.stop = func() { cancel(); <-done }
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		renewLoop(rctx, cfg, lease, lost, renew, driven)
	}()
}

// renewLoop extends the lease's TTL every cfg.RenewEvery until ctx ends.
// Before each renewal it calls cfg.Hook at PointRenew (a paused client
// blocks there, so its renewal pauses too; ErrCrashed stops renewal without
// closing lost: a crashed client observes nothing). It closes lost when a
// renewal finds the key gone or owned by another token, or at the deadline
// TTL after the last successful renewal's invoke (the grant's start at
// first) when no renewal succeeded since: a timer fires then, between
// ticks, so Lost is not up to RenewEvery late (the key has expired by
// then on the client's clock). Each renewal call is bounded by RenewEvery
// and by that deadline, and reported to cfg.OnRenew; a validity it
// returns moves the lease's validity deadline (from the call's return).
func renewLoop(ctx context.Context, cfg Config, lease *Lease, lost chan<- struct{}, renew renewFunc, driven bool) {
	// deadline: when the key expires at the latest, on the client clock.
	deadline := lease.Start.Add(cfg.TTL)
	tick := time.NewTicker(cfg.RenewEvery)
	defer tick.Stop()
	// expiry fires at the deadline: Lost is closed then, not at the next
	// tick after it (up to RenewEvery late, while the holder may write
	// after the key expired and another owner was granted it).
	expiry := time.NewTimer(deadline.Sub(cfg.Now()))
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expiry.C:
			close(lost)
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
		if !cfg.Now().Before(deadline) {
			close(lost)
			return
		}
		callCtx, done := ctx, func() bool { return false }
		if driven {
			if cfg.Hook != nil {
				if err := cfg.Hook(ctx, PointExtend); errors.Is(err, ErrCrashed) || ctx.Err() != nil {
					return
				}
			}
			if cfg.CallContext != nil {
				callCtx, done = cfg.CallContext(ctx)
			}
		}
		invoke := cfg.Now()
		// A call still unanswered at the deadline is given up then:
		// the key has expired if it did not run.
		cctx, cancel := context.WithTimeout(callCtx, min(cfg.RenewEvery, deadline.Sub(invoke)))
		validity, err := renew(cctx)
		cancel()
		if done() && err != nil && Reason(err) == "" {
			err = WithReason(err, ReasonCancelled)
		}
		complete := cfg.Now()
		if err == nil && validity > 0 {
			lease.SetValidUntil(complete.Add(validity))
		}
		if cfg.OnRenew != nil && ctx.Err() == nil {
			r := Renewal{Key: lease.Key, Token: lease.Token, Invoke: invoke, Complete: complete, Err: err}
			if err == nil && validity > 0 {
				r.ValidUntil = complete.Add(validity)
			}
			cfg.OnRenew(r)
		}
		switch {
		case err == nil:
			deadline = invoke.Add(cfg.TTL)
			expiry.Reset(deadline.Sub(cfg.Now()))
		case errors.Is(err, ErrNotHeld):
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

// DriveRenewal starts lockbench's own renewal of lease, for a lock that
// serves an extend call but does not renew by itself (package locktest's
// Go locks, as an adapter that declares extend): every cfg.RenewEvery
// (default TTL/3) it calls the Hook at PointRenew and at PointExtend, then
// extend under cfg.CallContext, reports the call to cfg.OnRenew and closes
// lease.Lost when extend returns an error wrapping ErrNotHeld or the TTL
// passed since the last extend that succeeded. extend returns how long the
// lock says the lease stays valid from its return (0: it says nothing).
// The renewal runs on a goroutine counted in wg until the lease's
// StopRenewal or ctx ends.
func DriveRenewal(ctx context.Context, wg *sync.WaitGroup, cfg Config, lease *Lease, extend func(ctx context.Context) (validity time.Duration, err error)) {
	cfg = cfg.WithDefaults()
	startRenewal(ctx, wg, cfg, lease, extend, true)
}

// StartRenewal starts a strategy's own renewal of lease (its watchdog,
// a library's refresh loop): every cfg.RenewEvery it calls the Hook at
// PointRenew, then renew, reports the call to cfg.OnRenew and closes
// lease.Lost when renew returns an error wrapping ErrNotHeld or the TTL
// passed since the last renewal that succeeded. renew returns how long
// the lock says the lease stays valid from its return (0: it says
// nothing). cfg is the Locker's, its defaults applied
// (Config.WithDefaults). The renewal runs on a goroutine counted in wg
// until the lease's StopRenewal or ctx ends.
func StartRenewal(ctx context.Context, wg *sync.WaitGroup, cfg Config, lease *Lease, renew func(ctx context.Context) (validity time.Duration, err error)) {
	startRenewal(ctx, wg, cfg, lease, renew, false)
}

// StopRenewal stops the lease's renewal (DriveRenewal, StartRenewal) and waits for its goroutine to end; it does nothing for a
// lease without one. A Locker's Release calls it before the release call.
func (l *Lease) StopRenewal() {
	if l.stop != nil {
		l.stop()
	}
}
