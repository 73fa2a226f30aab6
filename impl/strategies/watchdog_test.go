package strategies_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// TestWatchdogRenews: renewal keeps the lock past 3×TTL; another owner is
// refused meanwhile; Lost stays open; release stops renewal.
func TestWatchdogRenews(t *testing.T) {
	_, nodes := startNodes(t, 1)
	ctx := context.Background()
	s, _ := strategies.Lookup("watchdog")
	ttl := 200 * time.Millisecond
	a := newLocker(t, s, impl.Config{Nodes: nodes, TTL: ttl, Owner: "a"})
	b := newLocker(t, s, impl.Config{Nodes: nodes, TTL: ttl, Owner: "b"})
	key := "k:renew"
	l, err := a.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if l.Lost == nil || !l.Validity.IsZero() {
		t.Fatalf("lease: Lost %v, Validity %v: want a Lost channel and no validity", l.Lost, l.Validity)
	}
	for time.Since(l.Start) < 3*ttl+ttl/2 {
		time.Sleep(ttl / 4)
		if got := holders(t, nodes, key, l.Token); got != 1 {
			t.Fatalf("%v after acquire: a's token gone", time.Since(l.Start))
		}
		if _, err := b.Acquire(ctx, key); !errors.Is(err, impl.ErrNotAcquired) {
			t.Fatalf("b.Acquire while a's watchdog renews: err = %v, want ErrNotAcquired", err)
		}
	}
	if isClosed(l.Lost) {
		t.Error("Lost closed although renewal succeeded")
	}
	if _, err := a.Release(ctx, l); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if isClosed(l.Lost) {
		t.Error("Lost closed by Release")
	}
}

// TestWatchdogLost: Lost fires when the key is deleted behind the holder's
// back, and when its renewal is paused (Hook blocks) past the TTL and
// another owner took the key meanwhile.
func TestWatchdogLost(t *testing.T) {
	_, nodes := startNodes(t, 1)
	ctx := context.Background()
	s, _ := strategies.Lookup("watchdog")
	ttl := 100 * time.Millisecond

	t.Run("key deleted", func(t *testing.T) {
		a := newLocker(t, s, impl.Config{Nodes: nodes, TTL: ttl, Owner: "a"})
		key := "k:deleted"
		l, err := a.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := nodes[0].Del(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, l.Lost, 2*time.Second, "Lost")
		if _, err := a.Release(ctx, l); !errors.Is(err, impl.ErrNotHeld) {
			t.Errorf("Release after Lost: err = %v, want ErrNotHeld", err)
		}
	})

	t.Run("client paused", func(t *testing.T) {
		var once sync.Once
		entered, resume := make(chan struct{}), make(chan struct{})
		hook := func(ctx context.Context, p impl.Point) error {
			if p != impl.PointRenew {
				return nil
			}
			once.Do(func() { close(entered) })
			select {
			case <-resume:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		a := newLocker(t, s, impl.Config{Nodes: nodes, TTL: ttl, Owner: "a", Hook: hook})
		b := newLocker(t, s, impl.Config{Nodes: nodes, TTL: 2 * time.Second, Owner: "b"})
		key := "k:paused"
		l, err := a.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		waitClosed(t, entered, 2*time.Second, "first renewal")
		waitGone(t, nodes, key)
		lb, err := b.Acquire(ctx, key)
		if err != nil {
			t.Fatalf("b.Acquire while a is paused past its TTL: %v", err)
		}
		if isClosed(l.Lost) {
			t.Error("Lost closed while the client was paused")
		}
		close(resume)
		waitClosed(t, l.Lost, 2*time.Second, "Lost after resume")
		if got := holders(t, nodes, key, lb.Token); got != 1 {
			t.Error("a's renewal after the pause touched b's lock")
		}
		if _, err := a.Release(ctx, l); !errors.Is(err, impl.ErrNotHeld) {
			t.Errorf("a.Release: err = %v, want ErrNotHeld", err)
		}
	})

	t.Run("close stops renewal", func(t *testing.T) {
		a, err := s.New(impl.Config{Nodes: nodes, TTL: ttl, Owner: "a"})
		if err != nil {
			t.Fatal(err)
		}
		key := "k:closed"
		if _, err := a.Acquire(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		waitGone(t, nodes, key)
	})
}

// TestWatchdogNodeDies: while renewals fail with unknown outcomes the
// watchdog keeps trying, and fires Lost only once TTL has passed since the
// last successful renewal.
func TestWatchdogNodeDies(t *testing.T) {
	c, nodes := startNodes(t, 1)
	ctx := context.Background()
	s, _ := strategies.Lookup("watchdog")
	ttl, every := 300*time.Millisecond, 50*time.Millisecond
	a := newLocker(t, s, impl.Config{Nodes: nodes, TTL: ttl, RenewEvery: every, Owner: "a"})
	l, err := a.Acquire(ctx, "k:dies")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * every)
	killed := time.Now()
	if err := c.Nodes()[0].Kill(); err != nil {
		t.Fatal(err)
	}
	lost := waitClosed(t, l.Lost, 3*time.Second, "Lost after the node died")
	// The last successful renewal was at most about one period before the
	// kill, so Lost must not come before kill + TTL − period (with slack for
	// scheduling); giving up at the first error would fire within a period.
	if d := lost.Sub(killed); d < ttl-2*every {
		t.Errorf("Lost %v after the kill: want >= %v (TTL since the last renewal)", d, ttl-2*every)
	}
	if _, err := a.Release(ctx, l); !unknown(err) {
		t.Errorf("Release on a dead node: err = %v, want an unknown-outcome error", err)
	}
}
