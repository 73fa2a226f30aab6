package strategies_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// TestQuorumNodeFailures runs redlock and the redsync adapter on 5 nodes:
// with 1 node killed they still acquire (validity deadline after the
// acquire returned and before start+TTL) and release; with 3 killed they
// return ErrNotAcquired, not an unknown outcome.
func TestQuorumNodeFailures(t *testing.T) {
	for _, name := range []string{"redlock", "redsync"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, nodes := startNodes(t, 5)
			ctx := context.Background()
			s, _ := strategies.Lookup(name)
			ttl := 500 * time.Millisecond
			l := newLocker(t, s, impl.Config{Nodes: nodes, TTL: ttl, Owner: "a"})
			key := "k:quorum"

			if err := c.Nodes()[0].Kill(); err != nil {
				t.Fatal(err)
			}
			lease, err := l.Acquire(ctx, key)
			if err != nil {
				t.Fatalf("Acquire with 1 of 5 nodes dead: %v", err)
			}
			if !lease.Validity.After(lease.End) || !lease.Validity.Before(lease.Start.Add(ttl)) {
				t.Errorf("Validity %v: want in (End %v, Start+TTL %v)", lease.Validity, lease.End, lease.Start.Add(ttl))
			}
			if got := holders(t, nodes[1:], key, lease.Token); got != 4 {
				t.Errorf("token on %d live nodes, want 4", got)
			}
			if _, err := l.Release(ctx, lease); err != nil {
				t.Errorf("Release with 1 of 5 nodes dead: %v", err)
			}

			for _, n := range c.Nodes()[1:3] {
				if err := n.Kill(); err != nil {
					t.Fatal(err)
				}
			}
			_, err = l.Acquire(ctx, key)
			if !errors.Is(err, impl.ErrNotAcquired) {
				t.Fatalf("Acquire with 3 of 5 nodes dead: err = %v, want ErrNotAcquired", err)
			}
			if got := exists(t, nodes[3:], key); got != 0 {
				t.Errorf("key left on %d live nodes after a failed acquire", got)
			}
		})
	}
}

// TestQuorumUnknownOutcome: with 3 of 5 nodes paused their SET times out
// and may land later, so a quorum might exist: the outcome is unknown, not
// ErrNotAcquired.
func TestQuorumUnknownOutcome(t *testing.T) {
	for _, name := range []string{"redlock", "redsync"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, nodes := startNodes(t, 5)
			ctx := context.Background()
			s, _ := strategies.Lookup(name)
			l := newLocker(t, s, impl.Config{Nodes: nodes, TTL: 500 * time.Millisecond, NodeTimeout: 50 * time.Millisecond, Owner: "a"})
			// Warm the connections: a paused node still accepts new connects,
			// but make every call go over an open connection.
			if lease, err := l.Acquire(ctx, "k:warm"); err != nil {
				t.Fatal(err)
			} else if _, err := l.Release(ctx, lease); err != nil {
				t.Fatal(err)
			}
			paused := c.Nodes()[:3]
			for _, n := range paused {
				if err := n.Pause(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = n.Resume() })
			}
			_, err := l.Acquire(ctx, "k:unknown")
			if !unknown(err) {
				t.Errorf("Acquire with 3 of 5 nodes paused: err = %v, want an unknown-outcome error", err)
			}
			for _, n := range paused {
				if err := n.Resume(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestRedlockValidity: the validity deadline follows the distlock formula
// with the client clock cfg.Now: Validity = Start + TTL − (TTL·drift + 2ms)
// when Start and End read the same clock instant.
func TestRedlockValidity(t *testing.T) {
	_, nodes := startNodes(t, 5)
	ctx := context.Background()
	s, _ := strategies.Lookup("redlock")
	frozen := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		ttl   time.Duration
		drift float64
		want  time.Duration // Validity − Start
	}{
		{"default drift", time.Second, 0, time.Second - 10*time.Millisecond - 2*time.Millisecond},
		{"drift 0.1", time.Second, 0.1, time.Second - 100*time.Millisecond - 2*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocker(t, s, impl.Config{Nodes: nodes, TTL: tt.ttl, DriftFactor: tt.drift, Owner: "a",
				Now: func() time.Time { return frozen }})
			lease, err := l.Acquire(ctx, "k:"+t.Name())
			if err != nil {
				t.Fatal(err)
			}
			if got := lease.Validity.Sub(lease.Start); got != tt.want {
				t.Errorf("Validity − Start = %v, want %v", got, tt.want)
			}
			if _, err := l.Release(ctx, lease); err != nil {
				t.Error(err)
			}
		})
	}
	// A clock that jumps forward by the TTL during the acquire leaves no
	// validity: not acquired, and the keys are unlocked again.
	t.Run("elapsed past TTL", func(t *testing.T) {
		calls := 0
		jumpy := func() time.Time {
			calls++
			return frozen.Add(time.Duration(calls-1) * time.Second)
		}
		l := newLocker(t, s, impl.Config{Nodes: nodes, TTL: time.Second, Owner: "a", Now: jumpy})
		key := "k:" + t.Name()
		if _, err := l.Acquire(ctx, key); !errors.Is(err, impl.ErrNotAcquired) {
			t.Errorf("Acquire: err = %v, want ErrNotAcquired", err)
		}
		if got := exists(t, nodes, key); got != 0 {
			t.Errorf("key left on %d nodes", got)
		}
	})
}
