// Package clustertest starts the real servers a test of a fault or a
// scenario needs (cluster.Start), stopped when the test ends, also on
// failure: the helpers chaos and its fault packages' tests share.
package clustertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/clockshim"
)

// Context returns a context of 30 s, cancelled when the test ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Start starts topology topo with options o and stops it when the test
// ends; with -short the test is skipped (it starts redis-server).
func Start(t testing.TB, topo cluster.Topology, o cluster.Options) *cluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts redis-server; skipped with -short")
	}
	c, err := cluster.Start(Context(t), topo, o)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// Shim builds the clock-offset shim in the user cache folder, as
// clockshim.Cached does, and returns its path.
func Shim(t testing.TB) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	p, err := clockshim.Build(Context(t), filepath.Join(dir, "lockbench"))
	if err != nil {
		t.Fatalf("build clock shim: %v", err)
	}
	return p
}
