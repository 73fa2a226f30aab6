package cluster

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	docker "github.com/moby/moby/client"
)

// dockerOptions skips the test when no Docker daemon answers, builds
// LocalImage when it is missing, and returns Options for the docker
// backend. When the test ends (also on failure) it checks that no
// container or network of this process is left.
func dockerOptions(t *testing.T) Options {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := DockerAvailable(ctx); err != nil {
		t.Skipf("docker backend test skipped: no Docker daemon answers: %v", err)
	}
	if err := BuildImage(ctx, LocalImage, false); err != nil {
		t.Fatalf("BuildImage: %v", err)
	}
	t.Cleanup(func() { assertNoLeftovers(t) })
	return Options{Backend: BackendDocker, Image: LocalImage, Logf: t.Logf}
}

// leftovers lists the containers, networks and volumes labelled by this
// process (volumes: anonymous volumes still attached to such containers).
func leftovers(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cli, err := dockerClient(ctx)
	if err != nil {
		t.Fatalf("docker: %v", err)
	}
	defer cli.Close()
	f := make(docker.Filters).Add("label", LabelPID+"="+itoa(os.Getpid()))
	var out []string
	cs, err := cli.ContainerList(ctx, docker.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		out = append(out, "container "+strings.Join(c.Names, ","))
		for _, m := range c.Mounts {
			out = append(out, "volume "+m.Name)
		}
	}
	ns, err := cli.NetworkList(ctx, docker.NetworkListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	return out
}

func assertNoLeftovers(t *testing.T) {
	t.Helper()
	if l := leftovers(t); len(l) > 0 {
		t.Errorf("docker objects left after the test: %v", l)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }


func TestDockerSingleFaults(t *testing.T) {
	o := dockerOptions(t)
	c := startT(t, Topology{Kind: Single}, o)
	ctx := ctxT(t)
	n := c.Nodes()[0]
	if c.Backend() != BackendDocker {
		t.Fatalf("Backend() = %q", c.Backend())
	}
	rc := client(t, n.Addr())
	if err := rc.Set(ctx, "lb:k", "v", 0).Err(); err != nil {
		t.Fatalf("SET via %s: %v", n.Addr(), err)
	}
	pid := n.PID()
	if pid == 0 || !alive(pid) {
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
	if n.Running() || alive(pid) {
		t.Fatalf("after Kill: Running %v, pid %d alive %v", n.Running(), pid, alive(pid))
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
	if _, err := rawInfo(ctx, n.Addr(), 300*time.Millisecond); err == nil {
		t.Fatal("isolated node still answers")
	}
	if err := n.Isolate(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := rawInfo(ctx, n.Addr(), time.Second); err != nil {
		t.Fatalf("reconnected node does not answer: %v", err)
	}
	if err := n.SetClockOffset(time.Second); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("SetClockOffset on docker = %v, want ErrUnsupported", err)
	}
}
