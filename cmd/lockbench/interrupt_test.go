package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOfflineInterruptMessage: check, report, compare and list start no
// server, so their interrupt message names none (and no --out); run's
// still does.
func TestOfflineInterruptMessage(t *testing.T) {
	root := newRoot()
	for _, tt := range []struct {
		args    []string
		offline bool
	}{
		{[]string{"check"}, true}, {[]string{"report"}, true}, {[]string{"compare"}, true}, {[]string{"list"}, true},
		{[]string{"run"}, false}, {[]string{"bench"}, false}, {[]string{"perf"}, false},
	} {
		cmd, _, err := root.Find(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := startsNoServer(cmd); got != tt.offline {
			t.Errorf("%s: startsNoServer = %v, want %v", tt.args[0], got, tt.offline)
		}
	}
	if msg := offlineInterrupt(true); strings.Contains(msg, "redis-server") || strings.Contains(msg, "--out") {
		t.Errorf("offline interrupt message %q names servers or --out", msg)
	}
}

// TestAfterSignal: once the signal context is cancelled, a command that
// finished anyway (or with an unexpected verdict) exits 130 with the
// interrupted message saying its results were written; without a signal
// the outcome is unchanged.
func TestAfterSignal(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		err      error
		code     int
		contains string
	}{
		{"no signal, ok", context.Background(), nil, 0, ""},
		{"no signal, unexpected", context.Background(), errUnexpected, 1, "unexpected"},
		{"no signal, inconclusive", context.Background(), fmt.Errorf("%w: x", errInconclusive), 4, "inconclusive"},
		{"signal, then an inconclusive verdict", cancelled, fmt.Errorf("%w: x", errInconclusive), 130, "results were written"},
		{"signal after the work", cancelled, nil, 130, "after the workload had ended"},
		{"signal, then an unexpected verdict", cancelled, fmt.Errorf("%w: x", errUnexpected), 130, "results were written"},
		{"signal during the work", cancelled, context.Canceled, 130, "interrupted"},
		// etcd and ZooKeeper runs once heard that "every redis-server" was stopped.
		{"signal during the work names every server kind", cancelled, context.Canceled, 130, "redis-server, redis-sentinel, etcd, ZooKeeper"},
		{"signal, library error", cancelled, errors.New("docker: cut short"), 130, "interrupted"},
	} {
		code, msg := exitCode(afterSignal(tt.ctx, tt.err), false)
		if code != tt.code || !strings.Contains(msg, tt.contains) {
			t.Errorf("%s: exit %d, %q; want %d and %q", tt.name, code, msg, tt.code, tt.contains)
		}
	}
}

// TestInterruptDuringChecks: SIGINT after the workload ended (its servers
// are stopped before the checks) still exits 130.
func TestInterruptDuringChecks(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(bin, "run", "--strategy", "token-lua", "--clients", "64", "--keys", "64", "--retry", "spin",
		"--duration", "1500ms", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for len(redisUnder(t, tmp)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for len(redisUnder(t, tmp)) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no exit 60 s after SIGINT")
	}
	var ee *exec.ExitError
	switch {
	case err == nil && !strings.Contains(out.String(), "interrupted"):
		t.Skipf("the run ended before the signal arrived:\n%s", out.String())
	case !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(out.String(), "after the workload had ended"):
		t.Errorf("SIGINT during the checks: %v, want exit 130 saying the results were written:\n%s", err, out.String())
	}
}
