package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/proc"
)

// startT starts topology t and stops it when the test ends, also on failure.
func startT(t *testing.T, topo Topology, o Options) *Cluster {
	t.Helper()
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Start(ctx, topo, o)
	if err != nil {
		t.Fatalf("Start(%s): %v", topo, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

// client returns a go-redis client for addr with short timeouts and no
// retries, closed when the test ends.
func client(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{
		Addr:          addr,
		DialTimeout:   500 * time.Millisecond,
		ReadTimeout:   time.Second,
		WriteTimeout:  time.Second,
		MaxRetries:    -1,
		DialerRetries: 1,
		PoolSize:      2,
	})
	t.Cleanup(func() { rc.Close() })
	return rc
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestStartStop(t *testing.T) {
	tests := []struct {
		topo  string
		nodes int
	}{
		{"single", 1},
		{"independent:5", 5},
	}
	for _, tt := range tests {
		t.Run(tt.topo, func(t *testing.T) {
			topo, err := ParseTopology(tt.topo)
			if err != nil {
				t.Fatal(err)
			}
			c := startT(t, topo, Options{})
			ctx := ctxT(t)
			if got := len(c.Nodes()); got != tt.nodes {
				t.Fatalf("%d nodes, want %d", got, tt.nodes)
			}
			if c.RedisVersion() == "" {
				t.Error("RedisVersion empty")
			}
			var pids []int
			seen := map[string]bool{}
			for i, n := range c.Nodes() {
				if want := "n" + strconv.Itoa(i+1); n.Name() != want {
					t.Errorf("node %d named %q, want %q", i, n.Name(), want)
				}
				if seen[n.Addr()] {
					t.Errorf("address %s used twice", n.Addr())
				}
				seen[n.Addr()] = true
				if err := client(t, n.Addr()).Ping(ctx).Err(); err != nil {
					t.Errorf("PING %s: %v", n.Name(), err)
				}
				if n.PID() == 0 {
					t.Errorf("%s: PID 0 while running", n.Name())
				}
				pids = append(pids, n.PID())
			}
			dir := c.Dir()
			if err := c.Stop(); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if err := c.Stop(); err != nil {
				t.Fatalf("second Stop: %v", err)
			}
			for _, pid := range pids {
				if proc.Alive(pid) {
					t.Errorf("pid %d still alive after Stop", pid)
				}
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temp dir %s not removed: %v", dir, err)
			}
		})
	}
}

func TestKill(t *testing.T) {
	c := startT(t, Topology{Kind: Independent, Nodes: 2}, Options{})
	n := c.Nodes()[0]
	pid := n.PID()
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if proc.Alive(pid) {
		t.Errorf("pid %d alive after Kill", pid)
	}
	if n.PID() != 0 {
		t.Errorf("PID() = %d after Kill, want 0", n.PID())
	}
	if err := client(t, n.Addr()).Ping(ctxT(t)).Err(); err == nil {
		t.Error("PING succeeded on a killed node")
	}
	if err := client(t, c.Nodes()[1].Addr()).Ping(ctxT(t)).Err(); err != nil {
		t.Errorf("other node: %v", err)
	}
	if err := n.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}
}

// TestRemoveStale removes an old, unused cluster folder and keeps a fresh
// one and one a process works in.
func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
	old := filepath.Join(tmp, "lockbench-cluster-old")
	fresh := filepath.Join(tmp, "lockbench-cluster-fresh")
	busy := filepath.Join(tmp, "lockbench-cluster-busy")
	for _, d := range []string{old, fresh, busy} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(busy, long, long)
	cmd := exec.Command("sleep", "30")
	cmd.Dir = busy
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Folders with an owner file: one of this (running) process, kept
	// even when old; one of a process that has exited, removed even when
	// fresh; one whose PID runs but started at another time (a reused
	// PID), removed.
	mine := filepath.Join(tmp, "lockbench-cluster-mine")
	dead := filepath.Join(tmp, "lockbench-cluster-dead")
	reused := filepath.Join(tmp, "lockbench-cluster-reused")
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	start, ok := procStart(os.Getpid())
	if !ok {
		t.Fatal("procStart of this process failed")
	}
	for d, owner := range map[string]string{
		mine:   fmt.Sprintf("%d %s", os.Getpid(), start),
		dead:   fmt.Sprintf("%d 1", exited.Process.Pid),
		reused: fmt.Sprintf("%d 1", os.Getpid()),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(mine, long, long)
	removeStale(tmp, time.Now().Add(-staleAfter))
	for d, want := range map[string]bool{old: false, fresh: true, busy: true, mine: true, dead: false, reused: false} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}
