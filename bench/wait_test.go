package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

// TestTokenLuaWaitShort is make test's one run of the lock that waits for
// a replica (its verdict rows run with LOCKBENCH_WAIT, make wait-seeds):
// token-lua-wait under the baseline starts a primary with one replica on
// its own, grants, and shows what its row expects (inconclusive, on a
// busy machine, is logged).
func TestTokenLuaWaitShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server; skipped with -short")
	}
	w := workload.Config{Clients: 8, TTL: 100 * time.Millisecond, Duration: 400 * time.Millisecond}
	r, err := runOnce("token-lua-wait", "baseline", 1, 1, w, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Topology != "replicated:1" {
		t.Errorf("ran on %q, want replicated:1 (token-lua-wait needs a replica)", r.Config.Topology)
	}
	switch r.Outcome() {
	case results.OutcomeUnexpected:
		t.Errorf("unexpected: %s", strings.Join(r.Unexpected, "; "))
	case results.OutcomeInconclusive:
		t.Logf("inconclusive: %s", strings.Join(r.Inconclusive, "; "))
	}
	if r.Evidence.Holds == 0 {
		t.Errorf("no grant in %v: the replica never acknowledged", w.Duration)
	}
}
