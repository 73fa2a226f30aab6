package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

// TestConsensusVerdicts runs the consensus locks' key pairs once each on
// clusters shared as a bench shares them (Shared): gc-pause breaks
// etcd-mutex's exclusion, zk-fenced keeps the resource safe under it,
// zk-lock keeps its lock through a leader kill and etcd-fenced its
// resource (etcd's exclusion there is at risk: a keep-alive late past the
// lease loses the lock). A run
// must not contradict its verdict row; an inconclusive one (too little
// evidence on a busy machine, after the bench's reruns) is logged. Every
// member is gone at the end (leakcheck). The consensus-seeds profile runs
// the same pairs with 20 seeds.
func TestConsensusVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and ZooKeeper; skipped with -short")
	}
	leakcheck.AtEnd(t)
	shared := NewShared(cluster.Options{})
	t.Cleanup(func() {
		if err := shared.Stop(); err != nil {
			t.Errorf("Shared.Stop: %v", err)
		}
	})
	out := t.TempDir()
	for _, tt := range []struct{ strategy, scenario, want string }{
		{"etcd-mutex", "gc-pause", "exclusion violated"},
		{"zk-fenced", "gc-pause", "resource ok"},
		{"etcd-fenced", "leader-kill", "resource ok"},
		{"zk-lock", "leader-kill", "exclusion ok"},
	} {
		t.Run(tt.strategy+"_"+tt.scenario, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			s := Spec{Strategy: tt.strategy, Scenario: tt.scenario, Seed: 1, OutDir: out, Shared: shared,
				Workload: workload.Config{Clients: 16, TTL: 100 * time.Millisecond, Duration: time.Second}}
			r, err := runCell(ctx, s, 1, nil, func(string) {})
			if err != nil {
				t.Fatal(err)
			}
			if r.Server == "" {
				t.Errorf("runs[].server empty")
			}
			got := "exclusion " + string(r.Verdict.Exclusion) + ", resource " + string(r.Verdict.Resource)
			switch r.Outcome() {
			case results.OutcomeUnexpected:
				t.Errorf("%s; want %s: %s", got, tt.want, strings.Join(r.Unexpected, "; "))
			case results.OutcomeInconclusive:
				t.Logf("inconclusive after %d reruns: %s", len(r.Earlier), strings.Join(r.Inconclusive, "; "))
			default:
				if !strings.Contains(got, tt.want) {
					t.Errorf("%s; want %s", got, tt.want)
				}
			}
		})
	}
}
