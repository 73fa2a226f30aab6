package cluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/proc"
)

// dockerOptions skips the test when no Docker daemon answers, builds
// dockerd.LocalImage when it is missing, and returns Options for the docker
// backend. When the test ends (also on failure) it checks that no
// container or network of this process is left.
func dockerOptions(t *testing.T) Options {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := dockerd.Available(ctx); err != nil {
		t.Skipf("docker backend test skipped: no Docker daemon answers: %v", err)
	}
	if err := dockerd.BuildImage(ctx, dockerd.LocalImage, false); err != nil {
		t.Fatalf("BuildImage: %v", err)
	}
	return Options{Backend: BackendDocker, Image: dockerd.LocalImage, Logf: t.Logf}
}

// startDockerT is startT with a start timeout for containers: each takes
// 0.3-5 s to start, depending on the machine's load.
func startDockerT(t *testing.T, topo Topology, o Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, vols, err := dockerd.Objects(ctx, dockerd.PIDLabel(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(ctx, topo, o)
	if err != nil {
		t.Fatalf("Start(%s): %v", topo, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		assertNoLeftovers(t, c.DockerLabel(), vols)
	})
	return c
}

// assertNoLeftovers fails t if a container or network with label is
// left, or dangling volumes grew beyond before.
func assertNoLeftovers(t *testing.T, label string, before int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	objs, vols, err := dockerd.Objects(ctx, label)
	if err != nil {
		t.Fatalf("DockerObjects: %v", err)
	}
	if len(objs) > 0 || vols > before {
		t.Errorf("docker objects left after the test: %v; dangling volumes %d (before %d)", objs, vols, before)
	}
}

func TestDockerSingleFaults(t *testing.T) {
	t.Parallel()
	o := dockerOptions(t)
	c := startDockerT(t, Topology{Kind: Single}, o)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := c.Nodes()[0]
	if c.Backend() != BackendDocker {
		t.Fatalf("Backend() = %q", c.Backend())
	}
	rc := client(t, n.Addr())
	if err := rc.Set(ctx, "lb:k", "v", 0).Err(); err != nil {
		t.Fatalf("SET via %s: %v", n.Addr(), err)
	}
	pid := n.PID()
	if pid == 0 || !proc.Alive(pid) {
		t.Fatalf("PID %d not a live host process", pid)
	}
	// Pause: frozen, commands time out; resume: they run again.
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if s, err := n.ProcState(); err != nil || s != "T" {
		t.Fatalf("ProcState after Pause = %q, %v; want T", s, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := rc.Ping(pctx).Err()
	cancel()
	if err == nil {
		t.Fatal("PING answered while the container is paused")
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	rc2 := client(t, n.Addr())
	if err := rc2.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
	// Kill + restart: a new process, empty (no persistence).
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.Running() || proc.Alive(pid) {
		t.Fatalf("after Kill: Running %v, pid %d alive %v", n.Running(), pid, proc.Alive(pid))
	}
	if err := n.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	rc3 := client(t, n.Addr())
	if v, err := rc3.Exists(ctx, "lb:k").Result(); err != nil || v != 0 {
		t.Fatalf("EXISTS after restart = %d, %v; want 0 (restarted empty)", v, err)
	}
	// Isolate: unreachable; reconnect: same address answers.
	if err := n.Isolate(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := rawInfo(ctx, n.Addr(), 300*time.Millisecond, security.Security{}); err == nil {
		t.Fatal("isolated node still answers")
	}
	if err := n.Isolate(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := rawInfo(ctx, n.Addr(), time.Second, security.Security{}); err != nil {
		t.Fatalf("reconnected node does not answer: %v", err)
	}
	if err := n.SetClockOffset(time.Second); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("SetClockOffset on docker = %v, want ErrUnsupported", err)
	}
}

// TestDockerSentinelFailover starts replicated:1+sentinel as containers:
// the replica syncs from the primary's container IP, the Sentinels find
// each other, and after the primary is killed they promote the replica,
// whose address the host reaches (what Sentinel announces to clients).
func TestDockerSentinelFailover(t *testing.T) {
	t.Parallel()
	o := dockerOptions(t)
	c := startDockerT(t, Topology{Kind: Replicated, Replicas: 1, Sentinels: 3}, o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := c.Primary(ctx)
	if err != nil || p != c.Nodes()[0] {
		t.Fatalf("Primary = %v, %v; want n1", p, err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	np, err := c.WaitPrimary(ctx, p)
	if err != nil {
		t.Fatalf("no failover: %v", err)
	}
	if np != c.Nodes()[1] {
		t.Fatalf("new primary %s, want n2", np.Name())
	}
	if err := client(t, np.Addr()).Set(ctx, "lb:k", "v", 0).Err(); err != nil {
		t.Fatalf("write to the promoted replica at %s: %v", np.Addr(), err)
	}
}

// failHelperEnv makes TestDockerFailingHelper run (and fail on purpose);
// TestDockerFailingTestLeavesNothing runs it in a child process.
const failHelperEnv = "LOCKBENCH_DOCKER_FAIL_HELPER"

// TestDockerFailingHelper starts a docker cluster and fails; it only runs
// as TestDockerFailingTestLeavesNothing's child.
func TestDockerFailingHelper(t *testing.T) {
	if os.Getenv(failHelperEnv) != "1" {
		t.Skip("runs only as the child of TestDockerFailingTestLeavesNothing")
	}
	o := Options{Backend: BackendDocker, Image: dockerd.LocalImage, Logf: t.Logf}
	c := startDockerT(t, Topology{Kind: Single}, o)
	t.Logf("started %v", c.Addrs())
	t.Fatal("deliberate failure with a running docker cluster")
}

// TestDockerFailingTestLeavesNothing runs a test that fails while its
// docker cluster runs, in a child process, and checks that the child
// failed and left no container, network or volume behind.
func TestDockerFailingTestLeavesNothing(t *testing.T) {
	t.Parallel()
	dockerOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	_, before, err := dockerd.Objects(ctx, dockerd.PIDLabel(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDockerFailingHelper$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), failHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "deliberate failure") || !strings.Contains(string(out), "started [") {
		t.Fatalf("child test should have started a cluster and failed; err %v, output:\n%s", err, out)
	}
	objs, vols, err := dockerd.Objects(ctx, dockerd.PIDLabel(cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) > 0 || vols > before {
		t.Fatalf("the failing test left %v, dangling volumes %d (before %d)", objs, vols, before)
	}
}

// TestDockerSweep kills a child holding a docker cluster with SIGKILL (no
// cleanup runs) and checks that dockerd.Sweep, as every docker Start does,
// removes what it left.
func TestDockerSweep(t *testing.T) {
	t.Parallel()
	dockerOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDockerFailingHelper$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), failHelperEnv+"=1")
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "started [") {
		k, err := pr.Read(buf)
		seen.Write(buf[:k])
		if err != nil {
			t.Fatalf("child ended before its cluster started: %v\n%s", err, seen.String())
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	objs, _, err := dockerd.Objects(ctx, dockerd.PIDLabel(cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatal("the SIGKILLed child left nothing: the sweep is not tested")
	}
	if err := dockerd.Sweep(ctx, false); err != nil {
		t.Fatal(err)
	}
	if objs, _, _ := dockerd.Objects(ctx, dockerd.PIDLabel(cmd.Process.Pid)); len(objs) > 0 {
		t.Fatalf("after the sweep: %v", objs)
	}
}

// TestDockerRedisCluster starts redis-cluster:3+3 as six containers
// joined by this host's redis-cli and runs TestRedisCluster's checks on
// it: the slot migration's MIGRATE goes from container to container, the
// failover's kill is the docker backend's. The cleanup checks that no
// container or network is left.
func TestDockerRedisCluster(t *testing.T) {
	t.Parallel()
	o := dockerOptions(t)
	if _, err := redisCLIPath(""); err != nil {
		t.Skipf("docker Redis Cluster test skipped: %v", err)
	}
	if err := CheckTopology(o, Topology{Kind: RedisCluster}); err != nil {
		t.Fatalf("CheckTopology(docker, redis-cluster) = %v, want nil", err)
	}
	began := time.Now()
	c := startDockerT(t, Topology{Kind: RedisCluster}, o)
	t.Logf("started %s on docker in %v", c.Topology(), time.Since(began).Round(time.Millisecond))
	for _, n := range c.Nodes() {
		if !strings.HasPrefix(n.Addr(), "10.213.") {
			t.Fatalf("%s at %s, want its container IP", n.Name(), n.Addr())
		}
	}
	exerciseRedisCluster(t, c)
}
