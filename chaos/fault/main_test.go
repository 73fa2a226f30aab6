package fault

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/clockshim"
	"github.com/lockbench/lockbench/internal/redislog"
)

// TestMain silences go-redis's dial-failure lines: the tests kill and pause
// nodes on purpose (see internal/redislog).
func TestMain(m *testing.M) { redislog.RunTests(m) }

func netCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// netCluster starts a topology and stops it at the end of the test, also
// on failure.
func netCluster(t *testing.T, topo cluster.Topology, o cluster.Options) *cluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts redis-server; skipped with -short")
	}
	c, err := cluster.Start(netCtx(t), topo, o)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// netShim builds the clock shim in the user cache folder, as clockshim.Cached does.
func netShim(t *testing.T) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	p, err := clockshim.Build(netCtx(t), filepath.Join(dir, "lockbench"))
	if err != nil {
		t.Fatalf("build clock shim: %v", err)
	}
	return p
}
