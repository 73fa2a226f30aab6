package locktest_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/locktest"
)

// TestGoLock runs a team's lock through locktest.Run on real redis-server
// processes: a token-checked release passes baseline and node-pause; a
// release without an ownership check (DEL) fails node-pause with an
// exclusion witness and a reproduce command, and keeps its results
// folder. No goroutine or server process outlives either.
func TestGoLock(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	leakcheck.AtEnd(t)
	claims := locktest.Claims{AtomicAcquire: true, TokenRelease: true}
	tests := []struct {
		name     string
		checked  bool
		wantFail bool
	}{
		{"token-checked release passes", true, false},
		{"unchecked release fails", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{T: t}
			rec.run(func(tb testing.TB) {
				locktest.Run(tb, newTokenLock(tc.checked), claims, locktest.WithScenarios("baseline", "node-pause"))
			})
			out := rec.text()
			if rec.Skipped() {
				t.Skipf("locktest skipped: %s", out)
			}
			if rec.Failed() != tc.wantFail {
				t.Fatalf("locktest failed = %v, want %v:\n%s", rec.Failed(), tc.wantFail, out)
			}
			t.Logf("what locktest.Run said:\n%s", out)
			if !tc.wantFail {
				return
			}
			for _, want := range []string{"node-pause seed 1: expected must-hold", "witness: exclusion: ", "reproduce: cd ", "LOCKTEST_SCENARIOS=node-pause LOCKTEST_SEED=1 go test"} {
				if !strings.Contains(out, want) {
					t.Errorf("the failure does not say %q:\n%s", want, out)
				}
			}
			m := regexp.MustCompile(`results kept in (\S+)`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("the failure names no results folder:\n%s", out)
			}
			defer os.RemoveAll(m[1])
			for _, f := range []string{"report.md", "results.json"} {
				if _, err := os.Stat(filepath.Join(m[1], f)); err != nil {
					t.Errorf("results folder: %v", err)
				}
			}
		})
	}
}

// TestMissingServers: without redis-server on PATH, Run fails the test
// (skips it under -short) with one message naming the install step.
func TestMissingServers(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	rec := &recorder{T: t}
	rec.run(func(tb testing.TB) {
		locktest.Run(tb, newTokenLock(true), locktest.Claims{AtomicAcquire: true, TokenRelease: true})
	})
	out := rec.text()
	if got, want := rec.Failed(), !testing.Short(); got != want || rec.Skipped() != testing.Short() {
		t.Fatalf("failed %v, skipped %v; want failed %v under -short=%v:\n%s", got, rec.Skipped(), want, testing.Short(), out)
	}
	for _, want := range []string{"redis-server not found", "make deps"} {
		if !strings.Contains(out, want) {
			t.Errorf("the message does not say %q:\n%s", want, out)
		}
	}
}

// TestExtender: a lock that extends on request and claims Renewal is
// renewed by Run: it keeps its lease through long-cs (must hold), and a
// paused client's renewal pauses with it at gc-pause (must break).
func TestExtender(t *testing.T) {
	leakcheck.AtEnd(t)
	locktest.Run(t, func(c locktest.Clients) (locktest.Lock, error) {
		l, err := newTokenLock(true)(c)
		return renewingLock{l.(*tokenLock)}, err
	}, locktest.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, locktest.WithScenarios("long-cs", "gc-pause"))
}

// TestReentrantLock: a reentrant hash lock (Claims.Reentrant, a
// locktest.ReentrantLock) nests three acquires per hold and passes the
// baseline, its counts judged by the reentrancy check; the same lock
// whose release deletes the whole hash at the first level fails it, with
// a reentrancy witness.
func TestReentrantLock(t *testing.T) {
	leakcheck.AtEnd(t)
	claims := locktest.Claims{AtomicAcquire: true, TokenRelease: true, Reentrant: true}
	tests := []struct {
		name      string
		deleteAll bool
		want      []string // in the failure; nil: passes
	}{
		{"counted release passes", false, nil},
		{"release that deletes the hash fails", true, []string{"baseline seed 1: expected must-hold", "witness: reentrancy: ", "reproduce: cd "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{T: t}
			rec.run(func(tb testing.TB) {
				locktest.Run(tb, newHashLock(tc.deleteAll), claims, locktest.WithScenarios("baseline"))
			})
			out := rec.text()
			if rec.Skipped() {
				t.Skipf("locktest skipped: %s", out)
			}
			if rec.Failed() != (tc.want != nil) {
				t.Fatalf("locktest failed = %v, want %v:\n%s", rec.Failed(), tc.want != nil, out)
			}
			t.Logf("what locktest.Run said:\n%s", out)
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("the failure does not say %q:\n%s", want, out)
				}
			}
			if m := regexp.MustCompile(`results kept in (\S+)`).FindStringSubmatch(out); m != nil {
				os.RemoveAll(m[1])
			}
		})
	}
}

// TestReentrantNeedsReleaseLevel: a lock that claims Reentrant without
// ReleaseLevel fails the test with one line naming the fix.
func TestReentrantNeedsReleaseLevel(t *testing.T) {
	leakcheck.AtEnd(t)
	rec := &recorder{T: t}
	rec.run(func(tb testing.TB) {
		locktest.Run(tb, newTokenLock(true), locktest.Claims{AtomicAcquire: true, TokenRelease: true, Reentrant: true}, locktest.WithScenarios("baseline"))
	})
	if out := rec.text(); !rec.Failed() || !strings.Contains(out, "has no ReleaseLevel method") {
		t.Fatalf("failed %v, want a failure naming ReleaseLevel:\n%s", rec.Failed(), out)
	}
}

// TestDocker: WithDocker runs the Redis servers as containers of
// lockbench's local image (make docker-image), node-pause freezing one;
// the token lock passes and no container or network is left. Skipped when
// no Docker daemon answers.
func TestDocker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := dockerd.Available(ctx); err != nil {
		t.Skipf("no Docker daemon answers: %v", err)
	}
	if err := dockerd.BuildImage(ctx, dockerd.LocalImage, false); err != nil {
		t.Fatalf("BuildImage: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if objs, _, err := dockerd.Objects(ctx, dockerd.PIDLabel(os.Getpid())); err != nil || len(objs) > 0 {
			t.Errorf("docker objects left: %v (%v)", objs, err)
		}
	})
	locktest.Run(t, newTokenLock(true), locktest.Claims{AtomicAcquire: true, TokenRelease: true},
		locktest.WithDocker(dockerd.LocalImage), locktest.WithScenarios("baseline", "node-pause"))
}

// TestDockerMissingImage: WithDocker with an image that is not on the
// machine fails the test (skips it under -short) with one message naming
// make docker-image.
func TestDockerMissingImage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := dockerd.Available(ctx); err != nil {
		t.Skipf("no Docker daemon answers: %v", err)
	}
	rec := &recorder{T: t}
	rec.run(func(tb testing.TB) {
		locktest.Run(tb, newTokenLock(true), locktest.Claims{AtomicAcquire: true, TokenRelease: true}, locktest.WithDocker("lockbench/no-such-image:0"))
	})
	out := rec.text()
	if rec.Failed() == testing.Short() || !strings.Contains(out, "make docker-image") {
		t.Fatalf("failed %v, skipped %v; want a failure (a skip under -short) naming make docker-image:\n%s", rec.Failed(), rec.Skipped(), out)
	}
}

// TestConsensusLock: a team's lock on etcd (a session per grant and the
// concurrency Mutex, dialled through Clients.Dial) passes the baseline
// and breaks under gc-pause, as its claims predict: the paused client's
// keep-alives pause with it, its session expires, and another client is
// granted while it still writes. Under -short: the baseline only.
func TestConsensusLock(t *testing.T) {
	leakcheck.AtEnd(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	scenarios := []string{"baseline", "gc-pause"}
	if testing.Short() {
		scenarios = scenarios[:1]
	}
	locktest.Run(t, newEtcdLock, locktest.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true},
		locktest.WithServer(locktest.Etcd), locktest.WithScenarios(scenarios...))
}

// TestDeadline: a test whose deadline leaves no time for a run fails
// before starting a server, naming go test -timeout.
func TestDeadline(t *testing.T) {
	leakcheck.AtEnd(t)
	rec := &recorder{T: t, deadline: time.Now().Add(5 * time.Second)}
	rec.run(func(tb testing.TB) {
		locktest.Run(tb, newTokenLock(true), locktest.Claims{AtomicAcquire: true, TokenRelease: true}, locktest.WithScenarios("baseline"))
	})
	out := rec.text()
	if !rec.Failed() || !strings.Contains(out, "no scenario ran before the test's deadline") || !strings.Contains(out, "-timeout") {
		t.Fatalf("failed %v; want a failure naming the deadline:\n%s", rec.Failed(), out)
	}
}
