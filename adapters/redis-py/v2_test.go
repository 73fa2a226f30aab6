package redispy_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/internal/leakcheck"
)

// startRedis starts one redis-server, stopped when t ends, and returns its address.
func startRedis(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c.Nodes()[0].Addr()
}

// lockers makes n logical clients of the adapter with args, for one run
// (adapterclient.ForRun: with --threads they share processes).
func lockers(t *testing.T, args, addr string, ttl time.Duration, n int) []impl.Locker {
	t.Helper()
	st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+command(t, args), adapterclient.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := adapterclient.ForRun(st)
	var ls []impl.Locker
	for i := range n {
		l, err := run.New(impl.Config{Endpoints: []string{addr}, TTL: ttl, Owner: fmt.Sprintf("c%d", i), Client: i})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		ls = append(ls, l)
	}
	return ls
}

// TestV2: protocol 2 in the Python adapter, two logical clients in one
// process (--threads 2). With a Lock object each (--check): a failed
// acquire says taken and gives the token redis-py tried; check answers
// Lock.owned(); a stale release after another owner took the key says
// taken (LockNotOwnedError; the adapter looks whose the key is), a release
// after expiry says expired. With one Lock object shared by both
// (--shared-lock, thread_local=False), the misuse redis-py's documentation
// warns of: after a's lease expired and b took the key, the shared object
// holds b's token, so a's stale release succeeds and deletes b's lock,
// and b's own release fails.
func TestV2(t *testing.T) {
	leakcheck.AtEnd(t, append(leakcheck.Servers, "python3")...)
	addr := startRedis(t)
	ttl := 300 * time.Millisecond
	for _, args := range []string{" --threads 2 --check", " --threads 2 --shared-lock"} {
		shared := strings.Contains(args, "shared")
		ls := lockers(t, args, addr, ttl, 2)
		a, b := ls[0], ls[1]
		if pa, pb := a.(interface{ Pid() int }).Pid(), b.(interface{ Pid() int }).Pid(); pa != pb {
			t.Fatalf("%q: clients in processes %d and %d, want one", args, pa, pb)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := fmt.Sprintf("k%v", shared)
		la, err := a.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Acquire(ctx, key)
		if !errors.Is(err, impl.ErrNotAcquired) || impl.Reason(err) != impl.ReasonTaken || impl.TriedToken(err) == "" || impl.TriedToken(err) == la.Token {
			t.Errorf("%q: b.Acquire while a holds: %v, reason %q, token %q: want fail, taken, b's own token", args, err, impl.Reason(err), impl.TriedToken(err))
		}
		if !shared {
			if valid, err := a.(impl.Checker).Check(ctx, la); err != nil || !valid {
				t.Errorf("Check of a held lock: %v, %v; want valid (Lock.owned)", valid, err)
			}
		}
		time.Sleep(ttl + ttl/3)
		if !shared {
			if valid, err := a.(impl.Checker).Check(ctx, la); err != nil || valid {
				t.Errorf("Check of an expired lock: %v, %v; want not valid", valid, err)
			}
		}
		lb, err := b.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		_, errA := a.Release(ctx, la)
		if shared {
			_, errB := b.Release(ctx, lb)
			// b's release: the shared object holds no token any more
			// (LockError "Cannot release an unlocked lock": reason unknown).
			if errA != nil || !errors.Is(errB, impl.ErrNotHeld) {
				t.Errorf("shared Lock object: a's stale release %v, b's release %v: want a's to succeed (deleting b's lock) and b's to fail", errA, errB)
			}
			continue
		}
		if !errors.Is(errA, impl.ErrNotHeld) || impl.Reason(errA) != impl.ReasonTaken {
			t.Errorf("a.Release after b took the key: %v, reason %q; want fail, taken", errA, impl.Reason(errA))
		}
		time.Sleep(ttl + ttl/3)
		if _, err := b.Release(ctx, lb); !errors.Is(err, impl.ErrNotHeld) || impl.Reason(err) != impl.ReasonExpired {
			t.Errorf("b.Release after expiry: %v, reason %q; want fail, expired", err, impl.Reason(err))
		}
	}
}
