package report

import (
	"slices"
	"testing"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/results"
)

// TestFamilyComparisons: one sentence per scope that two families ran,
// counting only runs with a decided exclusion check, and naming a
// difference only when one family broke and another never did.
func TestFamilyComparisons(t *testing.T) {
	run := func(st, sc, ex, res string) results.Run {
		return results.Run{Strategy: st, Scenario: sc, Verdict: results.Verdict{Exclusion: checker.Status(ex), Resource: checker.Status(res)}}
	}
	infos := []results.StrategyInfo{{Name: "token-lua"}, {Name: "fenced"}, {Name: "etcd-mutex", Server: "etcd"}, {Name: "zk-lock", Server: "zookeeper"}}
	tests := []struct {
		name string
		runs []results.Run
		want []string
	}{
		{"failover against leader-kill", []results.Run{
			run("token-lua", "failover-lost-write", "violated", "violated"),
			run("token-lua", "failover-lost-write", "violated", "violated"),
			run("etcd-mutex", "leader-kill", "ok", "ok"),
			run("etcd-mutex", "leader-kill", "ok", "ok"),
			run("etcd-mutex", "leader-kill", "inconclusive", "inconclusive"),
		}, []string{"failover (Redis: failover-lost-write, sentinel-failover; etcd and ZooKeeper: leader-kill): Redis lost the lock, etcd never did: exclusion broke in Redis 2 of 2 runs (token-lua; 2 with lost updates), etcd 0 of 2."}},
		{"every family broke", []results.Run{
			run("token-lua", "gc-pause", "violated", "violated"),
			run("fenced", "gc-pause", "violated", "ok"),
			run("zk-lock", "gc-pause", "violated", "violated"),
			run("etcd-mutex", "gc-pause", "violated", "violated"),
		}, []string{"gc-pause: every family lost the lock in some runs: exclusion broke in Redis 2 of 2 runs (token-lua, fenced; 1 with lost updates), etcd 1 of 1 (etcd-mutex; 1 with lost updates), ZooKeeper 1 of 1 (zk-lock; 1 with lost updates)."}},
		{"none broke", []results.Run{run("token-lua", "baseline", "ok", "ok"), run("zk-lock", "baseline", "ok", "ok")},
			[]string{"baseline: no family lost the lock: exclusion broke in Redis 0 of 1 runs, ZooKeeper 0 of 1."}},
		{"one family only: no sentence", []results.Run{run("token-lua", "baseline", "ok", "ok"), run("fenced", "baseline", "violated", "ok")}, nil},
		{"a Redis scenario against no consensus run", []results.Run{run("token-lua", "node-restart", "violated", "violated"), run("etcd-mutex", "baseline", "ok", "ok")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FamilyComparisons(&results.File{Strategies: infos, Runs: tt.runs})
			if !slices.Equal(got, tt.want) {
				t.Errorf("FamilyComparisons =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
