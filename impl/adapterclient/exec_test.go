package adapterclient_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/impl/strategies"
)

// TestBadAdapters runs broken adapters (testdata/adapters, tiny shell
// scripts) through the exec strategy: each gives a one-line error naming
// its command and its problem, wrapping impl.ErrFatal, at the step where
// the problem shows (lookup, a client's start, a call, close), and no
// process of it is left behind.
func TestBadAdapters(t *testing.T) {
	opts := adapterclient.ExecOptions{HelloTimeout: 500 * time.Millisecond, Grace: 200 * time.Millisecond, ExitTimeout: 200 * time.Millisecond, MaxLog: 64 << 10}
	tests := []struct {
		script string
		// step is where the error must come from: "lookup", "new", "acquire", "check" or "close".
		step string
		want string
	}{
		{"does-not-exist.sh", "lookup", "cannot be started: fork/exec testdata/adapters/does-not-exist.sh: no such file or directory; give a command on PATH or the path of an executable file"},
		{"not-executable.sh", "lookup", "cannot be started: fork/exec testdata/adapters/not-executable.sh: permission denied; make the file executable (chmod +x)"},
		{"exits-before-hello.sh", "lookup", `exited before its hello (exit status 1); its last stderr line: "ModuleNotFoundError: No module named 'redis'"; its log: `},
		{"silent.sh", "lookup", "wrote no hello within 500ms"},
		{"not-json.sh", "lookup", `wrote a line that is not JSON (stdout carries protocol messages only: write logs to stderr): line "starting adapter v1.2 ..."`},
		{"protocol-3.sh", "lookup", "its hello speaks protocol 3, this lockbench speaks 1 to 2"},
		{"threads-zero.sh", "lookup", "its hello declares 0 threads (1 to 1024 logical clients per process)"},
		{"shared-lock-alone.sh", "lookup", `its hello declares shared_lock without threads above 1`},
		{"v2-in-v1.sh", "lookup", `its hello declares check, of protocol 2, but speaks protocol 1: declare "protocol": 2`},
		{"ask-without-check.sh", "lookup", `its hello's policy asks the lock before each write (ask_lock) but the hello does not serve check`},
		{"bad-reason.sh", "acquire", `answered acquire (id 2) with reason "gone" (one of expired, taken, unavailable, cancelled, unknown)`},
		{"check-without-valid.sh", "check", "answered check (id 3) without valid (true: it still holds the lease, false: not)"},
		{"quorum-one-node.sh", "lookup", "its hello claims a quorum on 1 node(s): a quorum needs at least 3 independent nodes"},
		{"wrong-id.sh", "new", `sent a "init_ok" message in reply to id 99, which lockbench did not send or which was answered already: line "{\"type\":\"init_ok\",\"in_reply_to\":99}"`},
		{"unknown-type.sh", "acquire", `sent a message of unknown type "granted"`},
		{"no-token.sh", "acquire", "granted acquire (id 2) without a token"},
		{"no-fence.sh", "acquire", "claims fencing but granted acquire (id 2) without a positive fence"},
		{"hangs.sh", "acquire", "did not answer acquire (id 2) within its deadline of 100ms plus 200ms grace"},
		{"exits-mid-call.sh", "acquire", `exited (exit status 3); its last stderr line: "panic: dial tcp: connection refused"`},
		{"ignores-sigterm.sh", "close", "exited neither on the end of its stdin nor on SIGTERM within 200ms each: killed (SIGKILL)"},
		{"floods-stderr.sh", "", ""},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.script, ".sh"), func(t *testing.T) {
			dir := t.TempDir()
			pids := filepath.Join(dir, "pids")
			t.Setenv("PIDFILE", pids)
			logPath := filepath.Join(dir, "adapter.log")
			logFile, err := os.Create(logPath)
			if err != nil {
				t.Fatal(err)
			}
			defer logFile.Close()
			o := opts
			o.Log, o.LogName = logFile, logPath
			if tt.want == "" {
				// A working adapter gets the default hello timeout: writing
				// 3 MB of stderr before its hello took longer than 500 ms on
				// a busy machine, and this case tests that the flood does
				// not block it, not how fast the machine is.
				o.HelloTimeout = 0
			}
			command := "testdata/adapters/" + tt.script
			step, err := runAdapter(command, o)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s: %v, want no error", step, err)
			case tt.want == "":
			case err == nil:
				t.Errorf("no error, want one at %s containing %q", tt.step, tt.want)
			case step != tt.step || !strings.Contains(err.Error(), tt.want):
				t.Errorf("error at %s:\n%v\nwant one at %s containing\n%s", step, err, tt.step, tt.want)
			case strings.Contains(err.Error(), "\n"):
				t.Errorf("error spans lines: %q", err)
			case !strings.Contains(err.Error(), strconv.Quote(command)):
				t.Errorf("error %q does not name the command %q", err, command)
			case !errors.Is(err, impl.ErrFatal):
				t.Errorf("error %q does not wrap impl.ErrFatal", err)
			}
			// An adapter dying before its hello once got no fix (exec:false).
			if tt.script == "exits-before-hello.sh" && (err == nil || !strings.HasSuffix(err.Error(), "; run the command by hand to see why: an adapter writes its hello at once (docs/protocol.md)")) {
				t.Errorf("error %v does not end with the fix", err)
			}
			// Two processes wrote the log: lookup's and the client's.
			if st, err := os.Stat(logPath); err == nil && st.Size() > 2*o.MaxLog+4096 {
				t.Errorf("log holds %d bytes, want at most MaxLog %d per process plus lockbench's notes", st.Size(), o.MaxLog)
			}
			if left := leftovers(t, pids); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// runAdapter looks an adapter up, starts one client of it, makes one
// acquire and closes it; it returns the first error and its step.
func runAdapter(command string, o adapterclient.ExecOptions) (string, error) {
	st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+command, o)
	if err != nil {
		return "lookup", err
	}
	l, err := st.New(impl.Config{Endpoints: []string{"127.0.0.1:1"}, TTL: time.Second, Owner: "c0"})
	if err != nil {
		return "new", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	lease, err := l.Acquire(ctx, "k")
	if err != nil && !errors.Is(err, impl.ErrNotAcquired) {
		l.Close()
		return "acquire", err
	}
	if c, ok := l.(impl.Checker); ok && lease != nil && st.Info().Policy.AskLock {
		if _, err := c.Check(ctx, lease); err != nil {
			l.Close()
			return "check", err
		}
	}
	if err := l.Close(); err != nil {
		return "close", err
	}
	return "", nil
}

// leftovers returns the processes still running (zombies aside) whose pid,
// or process group, is one the adapters wrote to the pid file: within 1 s
// there must be none.
func leftovers(t *testing.T, pidFile string) []string {
	t.Helper()
	data, _ := os.ReadFile(pidFile)
	started := map[string]bool{}
	for _, f := range strings.Fields(string(data)) {
		started[f] = true
	}
	if len(started) == 0 {
		return nil
	}
	var left []string
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		left = left[:0]
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, p := range stats {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			// pid (comm) state ppid pgrp ...
			s := string(b)
			pid, rest := s[:strings.IndexByte(s, ' ')], s[strings.LastIndexByte(s, ')')+2:]
			f := strings.Fields(rest)
			if len(f) < 3 || f[0] == "Z" {
				continue
			}
			if started[pid] || started[f[2]] {
				left = append(left, strings.TrimSpace(s[:strings.LastIndexByte(s, ')')+1]))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}

// TestCrashAtPoint: an adapter that declares a crash point stops there in
// each call; a hook that crashes the client there makes lockbench answer
// crash, and the adapter exits at that point (the call returns
// impl.ErrCrashed, its child process dies with it, the log says so); a
// hook that lets it go on gets a grant; an adapter that goes on past a
// crash it was asked for is broken (impl.ErrFatal, one line).
func TestCrashAtPoint(t *testing.T) {
	crash := func(context.Context, impl.Point) error { return impl.ErrCrashed }
	goOn := func(context.Context, impl.Point) error { return nil }
	for _, tt := range []struct {
		name         string
		hook         impl.Hook
		ignoreCrash  bool
		want, logged string
	}{
		{"crash", crash, false, "", "exited at point after-set as asked (exit status 1)"},
		{"continue", goOn, false, "ok", ""},
		{"ignores-crash", crash, true, `went on past point "after-set" after lockbench asked it to crash there`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pids := filepath.Join(dir, "pids")
			t.Setenv("PIDFILE", pids)
			if tt.ignoreCrash {
				t.Setenv("IGNORE_CRASH", "1")
			}
			logPath := filepath.Join(dir, "adapter.log")
			logFile, err := os.Create(logPath)
			if err != nil {
				t.Fatal(err)
			}
			defer logFile.Close()
			o := adapterclient.ExecOptions{ExitTimeout: 500 * time.Millisecond, Log: logFile, LogName: logPath}
			st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+"testdata/adapters/crash-point.sh", o)
			if err != nil {
				t.Fatal(err)
			}
			if p := st.Info().CrashPoint; p != "after-set" {
				t.Errorf("Info().CrashPoint = %q, want after-set", p)
			}
			var seen []impl.Point
			hook := func(ctx context.Context, p impl.Point) error {
				seen = append(seen, p)
				return tt.hook(ctx, p)
			}
			l, err := st.New(impl.Config{Endpoints: []string{"127.0.0.1:1"}, TTL: time.Second, Owner: "c0", Hook: hook})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			lease, err := l.Acquire(ctx, "k")
			l.Close()
			switch {
			case tt.want == "ok" && (err != nil || lease.Token == ""):
				t.Errorf("Acquire: %v, %v; want a grant", lease, err)
			case tt.want == "" && !errors.Is(err, impl.ErrCrashed):
				t.Errorf("Acquire: %v, want impl.ErrCrashed", err)
			case tt.want != "" && tt.want != "ok" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, impl.ErrFatal) || strings.Contains(err.Error(), "\n")):
				t.Errorf("Acquire: %v, want a one-line error wrapping impl.ErrFatal containing %q", err, tt.want)
			}
			if len(seen) != 1 || seen[0] != "after-set" {
				t.Errorf("hook saw %v, want [after-set]", seen)
			}
			if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), tt.logged) {
				t.Errorf("log %q lacks %q", log, tt.logged)
			}
			if left := leftovers(t, pids); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// TestUnknownAdapterName: exec:NAME that is neither on PATH nor in
// adapters.conf names both and the fix in one line.
func TestUnknownAdapterName(t *testing.T) {
	_, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+"no-such-adapter-xyz", adapterclient.ExecOptions{HelloTimeout: time.Second})
	want := `names no adapter "no-such-adapter-xyz" either: give one of its names, a command on PATH or the path of an executable file`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "executable file") {
		t.Errorf("err = %v, want it to end with %q", err, want)
	}
}

// TestCancel: a call cancelled in flight (its ctx cancelled with cause
// impl.ErrCancelled, as the cancel fault does). An adapter that serves
// cancel is sent a cancel request and its answer, unknown with reason
// cancelled, is the call's; one that does not (protocol 1) is abandoned:
// the call ends at once, unknown with reason cancelled, and its late
// reply is ignored. Neither is a broken adapter.
func TestCancel(t *testing.T) {
	for _, script := range []string{"cancel-v2.sh", "cancel-v1.sh"} {
		t.Run(strings.TrimSuffix(script, ".sh"), func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			t.Setenv("PIDFILE", pids)
			st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+"testdata/adapters/"+script, adapterclient.ExecOptions{Grace: time.Second, ExitTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			l, err := st.New(impl.Config{Endpoints: []string{"127.0.0.1:1"}, TTL: time.Second, Owner: "c0"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			cctx, cancelCall := context.WithCancelCause(ctx)
			time.AfterFunc(50*time.Millisecond, func() { cancelCall(impl.ErrCancelled) })
			start := time.Now()
			_, err = l.Acquire(cctx, "k")
			switch {
			case err == nil || errors.Is(err, impl.ErrNotAcquired) || errors.Is(err, impl.ErrFatal):
				t.Errorf("Acquire: %v, want an unknown outcome", err)
			case impl.Reason(err) != impl.ReasonCancelled:
				t.Errorf("Acquire: %v, reason %q, want cancelled", err, impl.Reason(err))
			case time.Since(start) > 250*time.Millisecond:
				t.Errorf("Acquire returned after %v: want soon after the cancel at 50ms", time.Since(start))
			}
			time.Sleep(400 * time.Millisecond) // the protocol-1 adapter's late reply comes, and is ignored
			if err := l.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if left := leftovers(t, pids); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// TestProtocol1: a protocol-1 adapter runs unchanged: no request carries
// a field of protocol 2 (the script exits on one), its policy asks no
// check, and it grants and releases.
func TestProtocol1(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	t.Setenv("PIDFILE", pids)
	st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+"testdata/adapters/v1-ok.sh", adapterclient.ExecOptions{ExitTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if p := st.Info().Policy; p.AskLock {
		t.Errorf("policy %+v: a protocol-1 adapter is never asked", p)
	}
	l, err := adapterclient.ForRun(st).New(impl.Config{Endpoints: []string{"127.0.0.1:1"}, TTL: time.Second, Owner: "c0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 3 {
		lease, err := l.Acquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if left := leftovers(t, pids); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// TestLookupStartsAFailingAdapterOnce: an adapter that started but failed
// its hello is not started again by the next Lookup of its name (a silent
// adapter would make each look-up wait the hello timeout again: a run
// reported one after twice the documented 30 s).
func TestLookupStartsAFailingAdapterOnce(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	script := filepath.Join(dir, "bad-hello.sh")
	body := "#!/bin/sh\necho x >> " + count + "\necho '{\"type\":\"hello\",\"protocol\":3,\"name\":\"bad\",\"version\":\"0\",\"claims\":{\"atomic_acquire\":true},\"nodes\":1}'\nread -r line\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := strategies.Lookup(adapterclient.ExecPrefix + script); err == nil || !strings.Contains(err.Error(), "protocol 3") {
			t.Fatalf("lookup %d: %v, want the hello's problem", i+1, err)
		}
	}
	b, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "x"); n != 1 {
		t.Errorf("the adapter was started %d times by two look-ups, want once", n)
	}
}

// TestSilentAdapterWait: a silent adapter is reported once its hello
// timeout has passed, and the error states the timeout and the wait it
// measured, which lies between the timeout and the look-up's own duration.
// The look-up's bound is loose (a busy machine delays the timer and the
// adapter's end): it catches a wait that is not the documented one.
func TestSilentAdapterWait(t *testing.T) {
	const timeout = time.Second
	t.Setenv("PIDFILE", filepath.Join(t.TempDir(), "pids"))
	start := time.Now()
	_, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+"testdata/adapters/silent.sh", adapterclient.ExecOptions{HelloTimeout: timeout, Grace: 100 * time.Millisecond, ExitTimeout: 100 * time.Millisecond})
	took := time.Since(start)
	if err == nil {
		t.Fatal("no error, want a missing hello")
	}
	m := regexp.MustCompile(`wrote no hello within (\S+) \(waited ([0-9.]+)s; `).FindStringSubmatch(err.Error())
	if m == nil || m[1] != timeout.String() {
		t.Fatalf("error %q does not state the timeout %v and the wait", err, timeout)
	}
	if waited, _ := strconv.ParseFloat(m[2], 64); waited < timeout.Seconds() || waited > took.Seconds()+0.05 {
		t.Errorf("error states a wait of %ss; the timeout is %v and the look-up took %v", m[2], timeout, took)
	}
	if took > timeout+3*time.Second {
		t.Errorf("the look-up took %v for a hello timeout of %v", took, timeout)
	}
}
