package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster/dockerd"
)

// TestBackendUsageErrors: backend flags that cannot work are usage errors
// (exit 2) that say what to do.
func TestBackendUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "docker", "--scenario", "clock-jump"}, "scenarios that work there: baseline"},
		{[]string{"--backend", "external"}, "--redis-addrs"},
		{[]string{"--backend", "external", "--redis-addrs", "127.0.0.1:1", "--scenario", "node-pause"}, "--allow-destructive"},
		{[]string{"--backend", "process", "--allow-destructive"}, "go with --backend external"},
		{[]string{"--backend", "podman"}, "valid: auto, process, docker, external"},
		{[]string{"--backend", "process", "--redis-image", "foo:bar"}, "--redis-image goes with --backend docker"},
		// --redis-cluster-addrs is validated like --redis-addrs.
		{[]string{"--backend", "process", "--redis-cluster-addrs", "127.0.0.1:7000"}, "--redis-cluster-addrs"},
		{[]string{"--backend", "external", "--redis-cluster-addrs", "127.0.0.1"}, `--redis-cluster-addrs: "127.0.0.1" is not host:port`},
		{[]string{"--backend", "external", "--redis-cluster-addrs", "127.0.0.1:0"}, `--redis-cluster-addrs: "127.0.0.1:0" is not host:port`},
		{[]string{"--backend", "external", "--redis-cluster-addrs", "127.0.0.1:7000,127.0.0.1:7000"}, "listed 2 times"},
		{[]string{"--backend", "external", "--redis-cluster-addrs", "localhost:7000,127.0.0.1:7000"}, "are the same server"},
	}
	for _, tt := range tests {
		args := append([]string{"run", "--strategy", "token-lua", "--out", t.TempDir()}, tt.args...)
		code, out := run(t, nil, args...)
		if code != 2 || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 mentioning %q", tt.args, code, out, tt.want)
		}
	}
}

// dockerOrSkip skips without a Docker daemon and builds the local image.
func dockerOrSkip(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := dockerd.Available(ctx); err != nil {
		t.Skipf("docker backend test skipped: no Docker daemon answers: %v", err)
	}
	if err := dockerd.BuildImage(ctx, dockerd.LocalImage, false); err != nil {
		t.Fatal(err)
	}
}

// TestDockerMissingImage: an image that is not on the machine is an
// environment error (exit 3) naming the make target, never a pull, found
// before anything starts: no "running" line, no results folder.
func TestDockerMissingImage(t *testing.T) {
	dockerOrSkip(t)
	dir := filepath.Join(t.TempDir(), "out")
	code, out := run(t, nil, "run", "--strategy", "token-lua", "--backend", "docker", "--redis-image", "lockbench/no-such-image:0", "--out", dir)
	if code != 3 || !strings.Contains(out, "make docker-image") || !strings.Contains(out, "never pulls") {
		t.Fatalf("exit %d, output %q; want exit 3 naming make docker-image", code, out)
	}
	if strings.Contains(out, "running") {
		t.Errorf("output %q: the missing image was found after the run started", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("results folder %s left behind (stat: %v)", dir, err)
	}
}

// TestDockerInterruptLeavesNothing interrupts a docker run (SIGINT, as
// Ctrl-C) once its container runs: lockbench exits 130 and no container,
// network or volume of it is left.
func TestDockerInterruptLeavesNothing(t *testing.T) {
	dockerOrSkip(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, vols, err := dockerd.Objects(ctx, dockerd.PIDLabel(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--strategy", "token-lua", "--backend", "docker", "--redis-image", dockerd.LocalImage, "--duration", "60s", "--out", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	label := dockerd.PIDLabel(cmd.Process.Pid)
	deadline := time.Now().Add(90 * time.Second)
	for {
		objs, _, err := dockerd.Objects(ctx, label)
		if err == nil && len(objs) >= 2 { // its network and its container
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the run made no container within 90 s: %v %v", objs, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // into the workload
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit after SIGINT: %v, want 130", err)
	}
	objs, v, err := dockerd.Objects(ctx, label)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) > 0 || v > vols {
		t.Errorf("left after SIGINT: %v, dangling volumes %d (before %d)", objs, v, vols)
	}
}

// TestDockerRefusesRandom: the random mix may jump a server's clock, which
// the docker backend cannot do, so docker refuses it before the run (exit
// 2, nothing started) instead of failing mid-run when the seed picks a
// jump; and clock-jump's refusal does not list random among the
// scenarios that work there.
func TestDockerRefusesRandom(t *testing.T) {
	dockerOrSkip(t)
	tests := []struct {
		scenario string
		want     string
	}{
		{"random", "scenario random cannot run on the docker backend: it needs clock"},
		{"clock-jump", "scenarios that work there: baseline"},
	}
	for _, tt := range tests {
		dir := filepath.Join(t.TempDir(), "out")
		code, out := run(t, nil, "run", "--strategy", "watchdog", "--scenario", tt.scenario, "--backend", "docker", "--redis-image", dockerd.LocalImage, "--out", dir)
		if code != 2 || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d, output %q; want exit 2 mentioning %q", tt.scenario, code, out, tt.want)
		}
		if strings.Contains(out, "random") && tt.scenario != "random" {
			t.Errorf("%s: output %q lists random among the scenarios docker can run", tt.scenario, out)
		}
		if strings.Contains(out, "running") {
			t.Errorf("%s: output %q: refused after the run started", tt.scenario, out)
		}
	}
}

// TestAutoBackendSaysWhy: --backend auto says in a note: line what it
// picked and why, and with no redis-server on PATH and no usable Docker
// image the error says auto tried the process backend first and names
// both fixes.
func TestAutoBackendSaysWhy(t *testing.T) {
	// A bench refused for its seed after the backend was chosen: no run starts.
	code, text := run(t, nil, "bench", "--seed", "0")
	if code != 2 || !strings.Contains(text, "note: --backend auto runs the process backend: ") || !strings.Contains(text, "redis-server is on PATH") {
		t.Errorf("auto with redis-server on PATH: exit %d, output %q; want a note naming the process backend", code, text)
	}
	noRedis := "PATH=" + t.TempDir()
	code, text = run(t, []string{noRedis}, "run", "--strategy", "token-lua", "--redis-image", "lockbench/no-such-image:0", "--out", t.TempDir())
	for _, want := range []string{"--backend auto tried the process backend first", "redis-server is not on PATH", "apt-get install redis-server", "make docker-image"} {
		if code != 3 || !strings.Contains(text, want) {
			t.Errorf("auto without redis-server and image: exit %d, output %q; want exit 3 mentioning %q", code, text, want)
		}
	}
	if strings.Count(strings.TrimSpace(text), "\n") > 0 {
		t.Errorf("want a one-line error, got %q", text)
	}
	dockerOrSkip(t)
	code, text = run(t, []string{noRedis}, "bench", "--seed", "0", "--redis-image", "lockbench/redis:local")
	if code != 2 || !strings.Contains(text, "note: --backend auto runs the docker backend (image lockbench/redis:local): redis-server is not on PATH") {
		t.Errorf("auto without redis-server, with Docker: exit %d, output %q; want a note naming the docker backend and why", code, text)
	}
}
