package strategies

import (
	"testing"

	"github.com/lockbench/lockbench/impl"
)

// TestGroups: every registered strategy lands in the group its Info says.
func TestGroups(t *testing.T) {
	want := map[string]string{
		"naive": impl.GroupRedisSingle, "set-nx-px": impl.GroupRedisSingle, "token-lua": impl.GroupRedisSingle, "token-lua-wait": impl.GroupRedisSingle, "token-lua-cluster": impl.GroupRedisSingle, "token-lua-wait-cluster": impl.GroupRedisSingle,
		"watchdog": impl.GroupRedisSingle, "watchdog-cluster": impl.GroupRedisSingle, "fenced-cluster": impl.GroupFenced, "reentrant": impl.GroupRedisSingle,
		"redlock": impl.GroupRedisQuorum, "fenced": impl.GroupFenced,
		"redsync": impl.GroupLibraries, "redsync-single": impl.GroupLibraries, "redislock": impl.GroupLibraries, "redislock-cluster": impl.GroupLibraries,
		"etcd-mutex": impl.GroupConsensus, "etcd-fenced": impl.GroupConsensus, "zk-lock": impl.GroupConsensus, "zk-fenced": impl.GroupConsensus,
	}
	for _, s := range append(All(), Consensus()...) {
		w, ok := want[s.Name()]
		if !ok {
			t.Errorf("strategy %s: no expected group in this test", s.Name())
			continue
		}
		if got := s.Info().Group(); got != w {
			t.Errorf("%s: group %q, want %q", s.Name(), got, w)
		}
	}
}
