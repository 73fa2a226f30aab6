package strategies_test

import (
	"testing"

	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/adapter"
)

// TestBuiltinsKeepNodesRule: the built-in strategies keep the rule an
// adapter's hello is held to (adapter.NodesProblem): one rule decides
// whether a lock's nodes and quorum claim agree, so etcd-mutex on 3
// members without a quorum claim is right for both, and an adapter on
// etcd that claims quorum is refused as a built-in would be.
func TestBuiltinsKeepNodesRule(t *testing.T) {
	for _, st := range strategies.All() {
		in := st.Info()
		if p := adapter.NodesProblem(string(in.Server), in.Nodes, in.Claims.Quorum); p != "" {
			t.Errorf("%s (server %q, %d nodes, quorum %v): %s", st.Name(), in.Server, in.Nodes, in.Claims.Quorum, p)
		}
	}
}
