package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serversUnder returns the processes named name (etcd, java, redis-server)
// whose working folder is under marker: the servers a lockbench with
// TMPDIR=marker started.
func serversUnder(name, marker string) []string {
	out, _ := exec.Command("pgrep", "-a", "-x", name).Output()
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		cwd, err := os.Readlink("/proc/" + fields[0] + "/cwd")
		if err == nil && strings.Contains(cwd, marker) {
			found = append(found, sc.Text())
		}
	}
	return found
}

// TestConsensusServersGoWithLockbench: a bench (its etcd cluster or
// ZooKeeper ensemble shared by its runs) interrupted with SIGINT exits 130,
// and a run killed with SIGKILL (no handler runs: Pdeathsig) takes its
// members down too; no etcd or java process is left either way.
func TestConsensusServersGoWithLockbench(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and ZooKeeper; skipped with -short")
	}
	for _, tt := range []struct {
		name, server string
		sig          syscall.Signal
		args         []string
	}{
		{"etcd bench SIGINT", "etcd", syscall.SIGINT, []string{"bench", "--profile", "ci", "--strategies", "etcd-mutex", "--scenarios", "baseline"}},
		{"zookeeper bench SIGINT", "java", syscall.SIGINT, []string{"bench", "--profile", "ci", "--strategies", "zk-lock", "--scenarios", "baseline"}},
		{"etcd run SIGKILL", "etcd", syscall.SIGKILL, []string{"run", "--strategy", "etcd-mutex", "--duration", "30s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(bin, append(tt.args, "--out", t.TempDir())...)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for len(serversUnder(tt.server, tmp)) < 3 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := len(serversUnder(tt.server, tmp)); n < 3 {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("only %d %s processes started", n, tt.server)
			}
			cmd.Process.Signal(tt.sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if tt.sig == syscall.SIGINT && (!errors.As(err, &ee) || ee.ExitCode() != 130) {
				t.Errorf("exit after SIGINT: %v, want 130", err)
			}
			deadline = time.Now().Add(5 * time.Second)
			for len(serversUnder(tt.server, tmp)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if left := serversUnder(tt.server, tmp); len(left) > 0 {
				t.Errorf("%s left running: %v", tt.server, left)
			}
		})
	}
}
