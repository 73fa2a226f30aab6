package cluster

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/clockshim"
	"github.com/lockbench/lockbench/internal/proc"
)

// procsUnder returns the pids of live processes whose working directory is
// under dir (every node runs in its own folder; redis rewrites its command
// line, so /proc/PID/cmdline does not show the folder).
func procsUnder(t *testing.T, dir string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dir) || !proc.Alive(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

func TestParseTopology(t *testing.T) {
	tests := []struct {
		in      string
		want    Topology
		wantStr string
		wantErr bool
	}{
		{in: "single", want: Topology{Kind: Single, Nodes: 1}, wantStr: "single"},
		{in: "independent", want: Topology{Kind: Independent, Nodes: 5}, wantStr: "independent:5"},
		{in: "independent:3", want: Topology{Kind: Independent, Nodes: 3}, wantStr: "independent:3"},
		{in: "replicated", want: Topology{Kind: Replicated, Nodes: 2, Replicas: 1}, wantStr: "replicated:1"},
		{in: "replicated:1", want: Topology{Kind: Replicated, Nodes: 2, Replicas: 1}, wantStr: "replicated:1"},
		{in: "replicated:2+sentinel", want: Topology{Kind: Replicated, Nodes: 3, Replicas: 2, Sentinels: 3}, wantStr: "replicated:2+sentinel"},
		{in: "single:2", wantErr: true},
		{in: "independent:0", wantErr: true},
		{in: "independent:x", wantErr: true},
		{in: "replicated:3", wantErr: true},
		{in: "replicated:1+witness", wantErr: true},
		{in: "cluster", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTopology(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseTopology(%q) = %+v, want error", tt.in, got)
				}
				if !strings.Contains(err.Error(), "independent:N") {
					t.Errorf("error %q does not list the valid forms", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if got.String() != tt.wantStr {
				t.Errorf("String() = %q, want %q", got.String(), tt.wantStr)
			}
			back, err := ParseTopology(got.String())
			if err != nil || back != got {
				t.Errorf("round trip of %q: %+v, %v", got.String(), back, err)
			}
		})
	}
}

func TestRestartPersistence(t *testing.T) {
	tests := []struct {
		p        Persistence
		wantKept bool
	}{
		{PersistenceNone, false},
		{PersistenceAOF, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.p), func(t *testing.T) {
			c := startT(t, Topology{Kind: Single}, Options{Persistence: tt.p})
			n := c.Nodes()[0]
			ctx := ctxT(t)
			addr, oldPID := n.Addr(), n.PID()
			rc := client(t, addr)
			cfg, err := rc.ConfigGet(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			wantAOF := map[Persistence]string{PersistenceNone: "no", PersistenceAOF: "yes"}[tt.p]
			if cfg["save"] != "" || cfg["appendonly"] != wantAOF || cfg["repl-diskless-sync-delay"] != "0" || cfg["dir"] != n.Dir() {
				t.Errorf("config save=%q appendonly=%q repl-diskless-sync-delay=%q dir=%q", cfg["save"], cfg["appendonly"], cfg["repl-diskless-sync-delay"], cfg["dir"])
			}
			if c.Node("n1") != n || c.Node("n9") != nil {
				t.Error("Node lookup by name")
			}
			if err := rc.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			if err := n.Restart(ctx, 50*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if n.Addr() != addr {
				t.Errorf("address changed across restart: %s -> %s", addr, n.Addr())
			}
			if n.PID() == oldPID || n.PID() == 0 || proc.Alive(oldPID) {
				t.Errorf("PID %d -> %d, old alive %v", oldPID, n.PID(), proc.Alive(oldPID))
			}
			v, err := client(t, addr).Get(ctx, "k").Result()
			switch {
			case tt.wantKept && (err != nil || v != "v"):
				t.Errorf("after restart with %s: GET k = %q, %v; want v", tt.p, v, err)
			case !tt.wantKept && !errors.Is(err, redis.Nil):
				t.Errorf("after restart with %s: GET k = %q, %v; want nil", tt.p, v, err)
			}
		})
	}
}

func TestPauseResume(t *testing.T) {
	c := startT(t, Topology{Kind: Single}, Options{})
	n := c.Nodes()[0]
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if s, err := n.ProcState(); err != nil || s != "T" {
		t.Fatalf("state after Pause = %q, %v; want T", s, err)
	}
	rc := redis.NewClient(&redis.Options{Addr: n.Addr(), ReadTimeout: 100 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
	defer rc.Close()
	if err := rc.Ping(ctxT(t)).Err(); err == nil {
		t.Error("PING answered by a paused server")
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if s, err := n.ProcState(); err != nil || s == "T" {
		t.Fatalf("state after Resume = %q, %v; want not T", s, err)
	}
	if err := client(t, n.Addr()).Ping(ctxT(t)).Err(); err != nil {
		t.Errorf("PING after Resume: %v", err)
	}
	// A paused node can still be killed.
	pid := n.PID()
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if proc.Alive(pid) {
		t.Errorf("paused pid %d alive after Kill", pid)
	}
	if _, err := n.ProcState(); err == nil {
		t.Error("ProcState of a killed node succeeded")
	}
}

func TestClockOffset(t *testing.T) {
	ctx := ctxT(t)
	shim, err := clockshim.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := startT(t, Topology{Kind: Independent, Nodes: 2}, Options{ClockShim: shim})
	n, other := c.Nodes()[0], c.Nodes()[1]
	rc := client(t, n.Addr())
	serverAhead := func(rc *redis.Client) time.Duration {
		t.Helper()
		st, err := rc.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return time.Until(st)
	}
	if d := serverAhead(rc); d.Abs() > time.Second {
		t.Fatalf("with offset 0 the server is %v off", d)
	}
	if err := rc.Set(ctx, "lease", "tok", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.SetClockOffset(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d := serverAhead(rc); d < 19*time.Second || d > 21*time.Second {
		t.Errorf("after SetClockOffset(20s) the server is %v ahead, want ~20s", d)
	}
	if n, err := rc.Exists(ctx, "lease").Result(); err != nil || n != 0 {
		t.Errorf("PX 10000 key after a +20s jump: EXISTS = %d, %v; want 0", n, err)
	}
	if d := serverAhead(client(t, other.Addr())); d.Abs() > time.Second {
		t.Errorf("the other node moved too: %v", d)
	}
	if err := n.SetClockOffset(-5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d := serverAhead(rc); d > -4*time.Second || d < -6*time.Second {
		t.Errorf("after SetClockOffset(-5s) the server is %v ahead, want ~-5s", d)
	}
}

func TestClockShimErrors(t *testing.T) {
	c := startT(t, Topology{Kind: Single}, Options{})
	if err := c.Nodes()[0].SetClockOffset(time.Second); err == nil {
		t.Error("SetClockOffset without a shim succeeded")
	}
	notELF := filepath.Join(t.TempDir(), "notelf.so")
	if err := os.WriteFile(notELF, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, shim := range []string{filepath.Join(t.TempDir(), "missing.so"), notELF} {
		dir := t.TempDir()
		c, err := Start(ctxT(t), Topology{Kind: Single}, Options{ClockShim: shim, Dir: dir})
		if err == nil {
			c.Stop()
			t.Fatalf("Start with shim %s succeeded", shim)
		}
		if !errors.Is(err, ErrEnvironment) {
			t.Errorf("shim %s: error %v does not wrap ErrEnvironment", shim, err)
		}
		if p := procsUnder(t, dir); len(p) > 0 {
			t.Errorf("processes left after a failed Start: %v", p)
		}
	}
}

func TestReplicatedLosesHeldWrite(t *testing.T) {
	c := startT(t, Topology{Kind: Replicated, Replicas: 1}, Options{})
	ctx := ctxT(t)
	primary, replica := c.Nodes()[0], c.Nodes()[1]
	if r, err := replica.Role(ctx); err != nil || r != "slave" {
		t.Fatalf("replica role %q, %v", r, err)
	}
	if p, err := c.Primary(ctx); err != nil || p != primary {
		t.Fatalf("Primary() = %v, %v", p, err)
	}
	pc, rc := client(t, primary.Addr()), client(t, replica.Addr())
	if err := pc.Set(ctx, "old", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReplicated(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := rc.Get(ctx, "old").Result(); err != nil || v != "1" {
		t.Fatalf("replica GET old = %q, %v; want 1", v, err)
	}
	if err := replica.HoldReplication(ctx, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := pc.Set(ctx, "fresh", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := primary.Kill(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := replica.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("Promote returned after %v (waits for the hold to end)", time.Since(start))
	if r, err := replica.Role(ctx); err != nil || r != "master" {
		t.Fatalf("role after Promote %q, %v", r, err)
	}
	if err := rc.Get(ctx, "fresh").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("fresh write survived the failover: %v", err)
	}
	if v, err := rc.Get(ctx, "old").Result(); err != nil || v != "1" {
		t.Errorf("old write lost: %q, %v", v, err)
	}
}

func TestSentinelFailover(t *testing.T) {
	c := startT(t, Topology{Kind: Replicated, Replicas: 1, Sentinels: 3}, Options{})
	ctx := ctxT(t)
	if len(c.Sentinels()) != 3 || len(c.SentinelAddrs()) != 3 || c.MasterName() != "lockbench" {
		t.Fatalf("sentinels %v, master name %q", c.SentinelAddrs(), c.MasterName())
	}
	old, err := c.WaitPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if old != c.Nodes()[0] {
		t.Fatalf("initial primary %s, want n1", old.Name())
	}
	// A Sentinel-aware client follows the failover.
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: c.MasterName(), SentinelAddrs: c.SentinelAddrs(), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer fc.Close()
	if err := fc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReplicated(ctx); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	np, err := c.WaitPrimary(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sentinels promoted %s %v after the kill", np.Name(), time.Since(killed))
	if np != c.Nodes()[1] {
		t.Errorf("new primary %s, want n2", np.Name())
	}
	if err := poll(ctx, 5*time.Second, "failover client", func() (bool, error) {
		v, err := fc.Get(ctx, "k").Result()
		return err == nil && v == "v", err
	}); err != nil {
		t.Error(err)
	}
}

func TestMissingBinary(t *testing.T) {
	tests := []struct {
		name string
		path string // "" = look up on an empty PATH
	}{
		{"not on PATH", ""},
		{"bad path", "/nonexistent/redis-server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path == "" {
				t.Setenv("PATH", t.TempDir())
			}
			_, err := Start(ctxT(t), Topology{Kind: Single}, Options{RedisServer: tt.path})
			if !errors.Is(err, ErrEnvironment) {
				t.Fatalf("error %v does not wrap ErrEnvironment", err)
			}
			if !strings.Contains(err.Error(), "apt-get install redis-server (or run make bench, which installs it)") {
				t.Errorf("error %q lacks the install hint", err)
			}
		})
	}
}

func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port

	t.Run("fixed port at start", func(t *testing.T) {
		free, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		c, err := Start(ctxT(t), Topology{Kind: Independent, Nodes: 2}, Options{Ports: []int{free, busy}, Dir: dir})
		if err == nil {
			c.Stop()
			t.Fatal("Start on a busy port succeeded")
		}
		if !errors.Is(err, ErrEnvironment) || !strings.Contains(err.Error(), strconv.Itoa(busy)) {
			t.Errorf("error %v: want ErrEnvironment naming port %d", err, busy)
		}
		if p := procsUnder(t, dir); len(p) > 0 {
			t.Errorf("processes left after a failed Start: %v", p)
		}
	})
	t.Run("port taken before restart", func(t *testing.T) {
		c := startT(t, Topology{Kind: Single}, Options{})
		n := c.Nodes()[0]
		if err := n.Kill(); err != nil {
			t.Fatal(err)
		}
		l2, err := net.Listen("tcp", n.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer l2.Close()
		err = n.Restart(ctxT(t), 0)
		if !errors.Is(err, ErrEnvironment) || !strings.Contains(err.Error(), strconv.Itoa(n.Port())) {
			t.Errorf("Restart on a taken port: %v; want ErrEnvironment naming port %d", err, n.Port())
		}
		l2.Close()
		if err := n.Restart(ctxT(t), 0); err != nil {
			t.Errorf("Restart after the port was freed: %v", err)
		}
	})
	t.Run("race on a picked port", func(t *testing.T) {
		// A server that loses its picked port retries on another one.
		c := startT(t, Topology{Kind: Single}, Options{})
		n := c.Nodes()[0]
		n.mu.Lock()
		n.fixed = false
		n.mu.Unlock()
		if err := n.kill(); err != nil {
			t.Fatal(err)
		}
		// startOn reports errPortInUse for a port someone listens on.
		if err := n.startOn(ctxT(t), busy); !errors.Is(err, errPortInUse) {
			t.Errorf("startOn(busy) = %v, want errPortInUse", err)
		}
		if err := n.start(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStopConcurrentAndStartCleanup(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(ctxT(t), Topology{Kind: Independent, Nodes: 3}, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(procsUnder(t, dir)) != 3 {
		t.Fatalf("want 3 processes under %s, got %v", dir, procsUnder(t, dir))
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = c.Stop() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if p := procsUnder(t, dir); len(p) > 0 {
		t.Errorf("processes left after Stop: %v", p)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("caller's Dir removed by Stop: %v", err)
	}
	// A cancelled context stops Start and leaves nothing behind.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir2 := t.TempDir()
	if c, err := Start(ctx, Topology{Kind: Independent, Nodes: 2}, Options{Dir: dir2}); err == nil {
		c.Stop()
		t.Error("Start with a cancelled context succeeded")
	}
	if p := procsUnder(t, dir2); len(p) > 0 {
		t.Errorf("processes left after a cancelled Start: %v", p)
	}
}
