package locktest_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/locktest"
)

// TestExampleModule runs `go test -race` on the example module
// (examples/locktest, a module of its own that imports locktest as a team
// would), each run with a TMPDIR of its own and a marker in its
// environment that every process it starts inherits: its correct lock
// passes the default scenarios; its lock whose release has no ownership
// check fails with exit 1, an exclusion witness and the reproduce command,
// and keeps its results folder. After each go test no goroutine is left
// (the example's TestMain runs goleak.VerifyTestMain), no process carrying
// the marker is alive (a server outliving the test binary would), and its
// TMPDIR is empty but for the results folder a failure keeps. Building
// the example under the race detector takes 1-3 minutes on 2 busy cores,
// so it runs only with LOCKTEST_EXAMPLE=1 (make test-locktest-example;
// make test runs the example's tests with -short, without the race
// detector).
func TestExampleModule(t *testing.T) {
	if os.Getenv("LOCKTEST_EXAMPLE") == "" {
		t.Skip("runs go test -race on the example module (1-3 minutes): run with LOCKTEST_EXAMPLE=1")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	dir := filepath.Join("..", "examples", "locktest")
	tests := []struct {
		name, run string
		broken    bool
	}{
		{"correct lock passes", "^TestLock$", false},
		{"unchecked release fails", "^TestUncheckedRelease$", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			mark := rand.Text()
			cmd := exec.Command(gobin, "test", "-race", "-v", "-count=1", "-run", tc.run, ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, markEnv+"="+mark)
			if tc.broken {
				cmd.Env = append(cmd.Env, "TOKENLOCK_BROKEN=1")
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			t.Logf("go test -race -v -run %s: %v in %v", tc.run, err, time.Since(start).Round(time.Second))
			var exit *exec.ExitError
			switch {
			case !tc.broken && err != nil:
				t.Fatalf("go test of the correct lock: %v\n%s", err, out.String())
			case tc.broken && !errors.As(err, &exit):
				t.Fatalf("go test of the broken lock: %v, want exit status 1\n%s", err, out.String())
			case tc.broken && exit.ExitCode() != 1:
				t.Fatalf("go test of the broken lock: exit %d, want 1\n%s", exit.ExitCode(), out.String())
			}
			if strings.Contains(out.String(), "found unexpected goroutines") || strings.Contains(out.String(), "WARNING: DATA RACE") {
				t.Errorf("go test reports a goroutine left or a data race:\n%s", out.String())
			}
			if left := markedProcesses(mark, tmp); len(left) > 0 {
				t.Errorf("processes outlived go test: %v", left)
			}
			var kept string
			if tc.broken {
				for _, want := range []string{"expected must-hold", "witness: exclusion: ", "reproduce: cd ", "LOCKTEST_SEED=1 go test -count=1 -run '^TestUncheckedRelease$' .", "--- FAIL: TestUncheckedRelease"} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("the failure does not say %q:\n%s", want, out.String())
					}
				}
				if m := regexp.MustCompile(`results kept in (\S+)`).FindStringSubmatch(out.String()); m == nil {
					t.Errorf("the failure names no results folder:\n%s", out.String())
				} else if _, err := os.Stat(filepath.Join(m[1], "report.md")); err != nil {
					t.Errorf("results folder: %v", err)
				} else {
					kept = filepath.Base(m[1])
				}
			}
			entries, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != kept {
					t.Errorf("go test left %s in its TMPDIR", e.Name())
				}
			}
			t.Logf("go test's output:\n%s", out.String())
		})
	}
}

// markEnv is the environment variable whose value marks the processes of
// one test's child: each process inherits it.
const markEnv = "LOCKTEST_MARK"

// markedProcesses are the live processes (not zombies) of one child
// test: those whose environment holds markEnv=mark, or whose working
// folder is under tmp, the child's TMPDIR (redis-server rewrites its
// environment for its process title, but runs in its node's folder, made
// under TMPDIR), as "NAME (pid N)".
func markedProcesses(mark, tmp string) []string {
	want := []byte(markEnv + "=" + mark + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, d := range dirs {
		env, _ := os.ReadFile(filepath.Join(d, "environ"))
		cwd, _ := os.Readlink(filepath.Join(d, "cwd"))
		if !bytes.Contains(env, want) && cwd != tmp && !strings.HasPrefix(cwd, tmp+"/") {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		if end := strings.LastIndexByte(s, ')'); end > 0 && strings.HasPrefix(strings.TrimSpace(s[end+1:]), "Z") {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(d, "comm"))
		out = append(out, strings.TrimSpace(string(comm))+" (pid "+filepath.Base(d)+")")
	}
	return out
}

// TestInterrupt: Ctrl-C (SIGINT) during locktest.Run stops the run: the
// test binary (this one, run again as a child with its own TMPDIR) exits
// on the signal, and leaves no server process and nothing in its TMPDIR.
func TestInterrupt(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		locktest.Run(t, newTokenLock(true), locktest.Claims{AtomicAcquire: true, TokenRelease: true}, locktest.WithScenarios("baseline", "node-pause"))
		return
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skipf("no redis-server: %v", err)
	}
	tmp, mark := t.TempDir(), rand.Text()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestInterrupt$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1", "TMPDIR="+tmp, markEnv+"="+mark)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The child must start with SIGINT at its default action, also where
	// this test runs with it ignored (a background job of a shell): a
	// signal this process catches is reset to the default in the child.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	err := cmd.Start()
	signal.Stop(sig)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var servers []string
	for deadline := time.Now().Add(60 * time.Second); len(servers) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		servers = slicesFilter(markedProcesses(mark, tmp), "redis-server")
	}
	if len(servers) == 0 {
		cmd.Process.Kill()
		<-done
		t.Fatalf("the child started no redis-server:\n%s", out.String())
	}
	time.Sleep(300 * time.Millisecond) // into the run
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the child did not exit within 30 s of Ctrl-C:\n%s", out.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
		t.Errorf("the child ended with %v, want killed by SIGINT:\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "interrupted (Ctrl-C)") {
		t.Errorf("the child does not say it was interrupted:\n%s", out.String())
	}
	if left := markedProcesses(mark, tmp); len(left) > 0 {
		t.Errorf("processes outlived the child: %v (it ran %v)", left, servers)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the child left %v in its TMPDIR", names)
	}
	t.Logf("the child ran %v, was interrupted and said:\n%s", servers, out.String())
}

// childEnv makes TestInterrupt the child that Ctrl-C interrupts.
const childEnv = "LOCKTEST_INTERRUPT_CHILD"

// slicesFilter keeps the entries of xs that start with prefix.
func slicesFilter(xs []string, prefix string) []string {
	var out []string
	for _, x := range xs {
		if strings.HasPrefix(x, prefix) {
			out = append(out, x)
		}
	}
	return out
}

// TestREADMEExample: the README's example test is the example module's
// lock_test.go, whole, in at most 40 lines.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join("..", "examples", "locktest", "lock_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Test your Go lock in `go test`")
	if !ok {
		t.Fatal("README has no section \"Test your Go lock in `go test`\"")
	}
	_, block, ok := strings.Cut(section, "```go\n")
	if block, _, ok = strings.Cut(block, "```\n"); !ok {
		t.Fatal("the README's section has no Go block")
	}
	if block != string(file) {
		t.Errorf("the README's example differs from examples/locktest/lock_test.go:\n%s", block)
	}
	if n := strings.Count(block, "\n"); n > 40 {
		t.Errorf("the README's example is %d lines, want at most 40", n)
	}
}
