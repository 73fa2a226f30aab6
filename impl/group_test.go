package impl

import "testing"

// TestGroups: every registered strategy lands in the group its Info says.
func TestGroups(t *testing.T) {
	want := map[string]string{
		"naive": GroupRedisSingle, "set-nx-px": GroupRedisSingle, "token-lua": GroupRedisSingle, "token-lua-wait": GroupRedisSingle, "token-lua-cluster": GroupRedisSingle,
		"watchdog": GroupRedisSingle, "watchdog-cluster": GroupRedisSingle, "fenced-cluster": GroupFenced, "reentrant": GroupRedisSingle,
		"redlock": GroupRedisQuorum, "fenced": GroupFenced,
		"redsync": GroupLibraries, "redsync-single": GroupLibraries, "redislock": GroupLibraries,
		"etcd-mutex": GroupConsensus, "etcd-fenced": GroupConsensus, "zk-lock": GroupConsensus, "zk-fenced": GroupConsensus,
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
