package locktest_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/locktest"
	"github.com/lockbench/lockbench/results"
)

// builtin is a built-in strategy's Locker as a locktest.Lock: the same
// lock code through locktest's path.
type builtin struct{ l impl.Locker }

func (b builtin) Acquire(ctx context.Context, key string) (locktest.Lease, error) {
	lease, err := b.l.Acquire(ctx, key)
	if err != nil {
		return locktest.Lease{}, err
	}
	return locktest.Lease{Token: lease.Token, Fence: lease.Fence, Handle: lease}, nil
}

func (b builtin) Release(ctx context.Context, lease locktest.Lease) error {
	_, err := b.l.Release(ctx, lease.Handle.(*impl.Lease))
	return err
}

func (b builtin) Close() error { return b.l.Close() }

// claimsOf are a built-in strategy's claims in locktest's terms.
func claimsOf(c impl.Claims) locktest.Claims {
	return locktest.Claims{AtomicAcquire: c.AtomicAcquire, TokenRelease: c.TokenRelease, Renewal: c.Renewal,
		Fencing: c.Fencing, Validity: c.Validity, Quorum: c.Quorum}
}

// TestSameAnswerAsLockbenchRun: a built-in strategy run through
// locktest.Run (its Locker behind locktest.Lock, its claims declared)
// gets the same expectation as lockbench run gives it from its verdict
// rows, and, where both runs are conclusive, the same verdicts, on the
// same seed: token-lua and set-nx-px (whose release checks no token)
// under gc-pause and node-pause, where they differ. 8 runs, about 20 s;
// skipped under -short.
func TestSameAnswerAsLockbenchRun(t *testing.T) {
	if testing.Short() {
		t.Skip("8 runs against redis-server (about 20 s)")
	}
	ci, err := bench.LookupProfile("ci")
	if err != nil {
		t.Fatal(err)
	}
	scenarios := []string{"gc-pause", "node-pause"}
	for _, name := range []string{"token-lua", "set-nx-px"} {
		t.Run(name, func(t *testing.T) {
			st, err := impl.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			locktest.Run(t, func(c locktest.Clients) (locktest.Lock, error) {
				l, err := st.New(impl.Config{Nodes: c.Redis, Endpoints: c.Endpoints, TTL: c.TTL, Owner: c.Owner, Now: c.Now})
				return builtin{l}, err
			}, claimsOf(st.Info().Claims), locktest.WithScenarios(scenarios...), locktest.WithResults(filepath.Join(dir, "locktest")))
			f, err := results.Load(filepath.Join(dir, "locktest", "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			for _, sc := range scenarios {
				i := slices.IndexFunc(f.Runs, func(r results.Run) bool { return r.Scenario == sc })
				if i < 0 {
					t.Errorf("%s: locktest recorded no run", sc)
					continue
				}
				via := f.Runs[i]
				spec := bench.Spec{Strategy: name, Scenario: sc, Seed: via.Seed, Workload: bench.WorkloadFor(st, ci, sc),
					Cluster: cluster.Options{Backend: cluster.BackendProcess}, OutDir: filepath.Join(dir, "run")}
				direct, err := bench.Run(context.Background(), spec)
				if err != nil {
					t.Logf("%s: lockbench run: %v (no verdict to compare)", sc, err)
				}
				if via.Expected != direct.Expected || !maps.Equal(via.ExpectedChecks, direct.ExpectedChecks) {
					t.Errorf("%s: locktest expects %s %v, lockbench run %s %v", sc, via.Expected, via.ExpectedChecks, direct.Expected, direct.ExpectedChecks)
				}
				if err != nil || via.Outcome() == results.OutcomeInconclusive || direct.Outcome() == results.OutcomeInconclusive {
					continue // an inconclusive run says nothing to compare
				}
				for _, c := range [][2]string{
					{string(via.Verdict.Exclusion), string(direct.Verdict.Exclusion)},
					{string(via.Verdict.Resource), string(direct.Verdict.Resource)},
					{string(via.Verdict.Liveness), string(direct.Verdict.Liveness)},
				} {
					if c[0] != c[1] {
						t.Errorf("%s: locktest's verdict %+v, lockbench run's %+v", sc, via.Verdict, direct.Verdict)
						break
					}
				}
			}
		})
	}
}
