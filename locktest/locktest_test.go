package locktest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

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
