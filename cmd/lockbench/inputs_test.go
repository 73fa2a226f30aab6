package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExternalAddrsRefusedUpFront: malformed or repeated addresses, and
// fewer servers than a strategy's topology needs, are usage errors (exit
// 2) given before anything runs: no "running" line, no results folder.
func TestExternalAddrsRefusedUpFront(t *testing.T) {
	a := "127.0.0.1:6390"
	five := strings.Repeat(a+",", 4) + a
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"repeated", []string{"run", "--strategy", "redlock", "--redis-addrs", five},
			"--redis-addrs: 127.0.0.1:6390 is listed 5 times; give 5 distinct servers (a quorum strategy such as redlock needs 5 independent servers)"},
		{"repeated sentinel", []string{"run", "--strategy", "token-lua", "--redis-addrs", a, "--sentinel-addrs", "127.0.0.1:26379,127.0.0.1:26379"},
			"--sentinel-addrs: 127.0.0.1:26379 is listed 2 times; give 2 distinct Sentinels"},
		{"same server by name", []string{"run", "--strategy", "token-lua", "--redis-addrs", "127.0.0.1:6390,localhost:6390"},
			"--redis-addrs: localhost:6390 and 127.0.0.1:6390 are the same server (127.0.0.1:6390); give 2 distinct servers"},
		{"same IPv6 server", []string{"run", "--strategy", "token-lua", "--redis-addrs", "[::1]:6390,[0:0::1]:6390"},
			"--redis-addrs: [0:0::1]:6390 and [::1]:6390 are the same server ([::1]:6390); give 2 distinct servers"},
		{"no port", []string{"run", "--strategy", "token-lua", "--redis-addrs", "notahost"}, `--redis-addrs: "notahost" is not host:port`},
		{"bad port", []string{"run", "--strategy", "token-lua", "--redis-addrs", "127.0.0.1:99999"}, `--redis-addrs: "127.0.0.1:99999" is not host:port`},
		{"no host", []string{"bench", "--redis-addrs", ":6379"}, `--redis-addrs: ":6379" is not host:port`},
		{"run too few", []string{"run", "--strategy", "redlock", "--redis-addrs", a},
			"strategy redlock needs 5 servers (topology independent:5), --redis-addrs gives 1: give 5 addresses in --redis-addrs, or choose a --strategy that needs fewer"},
		{"bench named too few", []string{"bench", "--strategies", "token-lua,redlock", "--redis-addrs", a},
			"strategy redlock needs 5 servers (topology independent:5), --redis-addrs gives 1: give 5 addresses in --redis-addrs, or choose --strategies that need fewer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, got := run(t, nil, append(tt.args, "--backend", "external", "--out", out)...)
			if code != 2 || !strings.Contains(got, tt.want) {
				t.Errorf("exit %d, output %q; want exit 2 with %q", code, got, tt.want)
			}
			if strings.Contains(got, "running") || strings.Count(strings.TrimSpace(got), "\n") > 0 {
				t.Errorf("want one line and nothing run, got %q", got)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("--out %s was created", out)
			}
		})
	}
}

// TestBenchDefaultStrategiesTooFewServersNA: with no --strategies, the
// strategies that need more servers than --redis-addrs gives are n/a (one
// line per scenario and reason, naming them) and the others go on (here to the check of
// an unreachable server: exit 3).
func TestBenchDefaultStrategiesTooFewServersNA(t *testing.T) {
	code, out := run(t, nil, "bench", "--scenarios", "baseline", "--backend", "external", "--redis-addrs", "127.0.0.1:1", "--out", t.TempDir())
	want := "n/a baseline for redlock, redsync: on the external backend the strategy needs 5 servers (topology independent:5), --redis-addrs gives 1: give 5 addresses in --redis-addrs"
	if code != 3 || !strings.Contains(out, want) || !strings.Contains(out, "127.0.0.1:1 does not answer") {
		t.Errorf("exit %d, output %q; want exit 3 with %q", code, out, want)
	}
	if strings.Contains(out, "token-lua/baseline") || strings.Contains(out, "redsync, token-lua") {
		t.Errorf("token-lua needs 1 server but was marked n/a: %q", out)
	}
}

// readOnlyDir returns a folder holding a copy of src's files (or an empty
// one for src "") that the command run by the returned function cannot
// write: mode 555, or, when the test runs as root (which writes anyway),
// the command runs as user nobody on a copy of the binary it can execute.
func readOnlyDir(t *testing.T, src string) (string, func(args ...string) (int, string)) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ro")
	if src == "" {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	} else if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	runBin := func(cmd *exec.Cmd) (int, string) {
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%v: %v", cmd.Args, err)
		}
		return cmd.ProcessState.ExitCode(), out.String()
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return dir, func(args ...string) (int, string) { return runBin(exec.Command(bin, args...)) }
	}
	// Root: nobody must reach the folder and run the binary.
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		} else if err == nil {
			os.Chmod(p, 0o644)
		}
		return nil
	})
	nb := filepath.Join(base, "lockbench")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nb, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, func(args ...string) (int, string) {
		cmd := exec.Command(nb, args...)
		cmd.Dir = base
		cmd.Env = append(os.Environ(), "HOME="+base, "TMPDIR="+os.TempDir())
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return runBin(cmd)
	}
}

// TestUnwritableFolders: report on a results folder it cannot write, and
// run, bench and perf with such an --out, exit 3 naming the folder and the
// fix; run, bench and perf before starting anything.
func TestUnwritableFolders(t *testing.T) {
	res := t.TempDir()
	if code, out := run(t, nil, "run", "--strategy", "set-nx-px", "--duration", "200ms", "--clients", "4", "--out", res); code != 0 {
		t.Fatalf("run: exit %d: %s", code, out)
	}
	dir, lb := readOnlyDir(t, res)
	code, out := lb("report", dir)
	if want := "cannot write results folder " + dir + ": "; code != 3 || !strings.Contains(out, want) || !strings.Contains(out, "choose a writable folder") {
		t.Errorf("report: exit %d, output %q; want exit 3 with %q and the fix", code, out, want)
	}
	empty, lb := readOnlyDir(t, "")
	for _, args := range [][]string{
		{"run", "--strategy", "token-lua", "--duration", "30s"},
		{"bench", "--strategies", "token-lua", "--scenarios", "baseline"},
		{"perf", "--clients", "1"},
	} {
		start := time.Now()
		code, out := lb(append(args, "--out", empty)...)
		if want := "cannot write results folder " + empty + ": "; code != 3 || !strings.Contains(out, want) || !strings.Contains(out, "choose another --out") {
			t.Errorf("%v: exit %d, output %q; want exit 3 with %q", args, code, out, want)
		}
		if strings.Contains(out, "running") || strings.Contains(out, "[1/") || time.Since(start) > 20*time.Second {
			t.Errorf("%v started work before refusing the folder (%v): %q", args, time.Since(start), out)
		}
	}
}

// TestReportMissingHistoriesWarns: a results.json copied without its
// histories re-renders (exit 0) with one warning line counting them, and
// the report links no missing history.
func TestReportMissingHistoriesWarns(t *testing.T) {
	res := t.TempDir()
	code, out, _ := runSplit(t, "run", "--strategy", "set-nx-px", "--duration", "200ms", "--clients", "4", "--quiet", "--out", res)
	if code != 0 || !strings.HasPrefix(out, "1 run, 1 as expected, 0 unexpected;") {
		t.Fatalf("run: exit %d, stdout %q; want the verdict line of 1 run", code, out)
	}
	other := t.TempDir()
	data, err := os.ReadFile(filepath.Join(res, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runSplit(t, "report", filepath.Join(other, "results.json"))
	want := "warning: 1 of 1 histories listed in " + filepath.Join(other, "results.json") + " are missing: their timelines and links are left out"
	if code != 0 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stdout, "report: ") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and one line %q", code, stdout, stderr, want)
	}
	md, err := os.ReadFile(filepath.Join(other, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "histories/") {
		t.Errorf("report.md links a missing history")
	}
	// With the histories there: no warning.
	if code, _, stderr := runSplit(t, "report", res); code != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("report of the complete folder: exit %d, stderr %q", code, stderr)
	}
}

// TestSmallInputs: list refuses arguments with a usage line; bench --help
// names every backend.
func TestSmallInputs(t *testing.T) {
	code, out := run(t, nil, "list", "extra")
	if want := `lockbench list takes no argument, got "extra" (usage: lockbench list [--matrix | --markdown])`; code != 2 || !strings.Contains(out, want) {
		t.Errorf("list extra: exit %d, output %q; want exit 2 with %q", code, out, want)
	}
	code, out = run(t, nil, "bench", "--help")
	if code != 0 || strings.Contains(out, "processes lockbench starts itself, check") || !strings.Contains(out, "--backend external") || !strings.Contains(out, "--backend docker: containers") {
		t.Errorf("bench --help: exit %d, output %q; want every backend named", code, out)
	}
}

// TestExternalInterruptMessage: Ctrl-C during a run on the external
// backend exits 130 saying lockbench started no server there.
func TestExternalInterruptMessage(t *testing.T) {
	addr, _ := startRedis(t)
	cmd := exec.Command(bin, "run", "--strategy", "token-lua", "--backend", "external", "--redis-addrs", addr, "--duration", "30s", "--out", t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "running ") {
	}
	time.Sleep(300 * time.Millisecond) // into the workload
	cmd.Process.Signal(syscall.SIGINT)
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit after SIGINT: %v, want 130", err)
	}
	if want := "interrupted: on the external backend lockbench started no server, so none was stopped"; !strings.Contains(rest.String(), want) {
		t.Errorf("stderr after SIGINT %q; want %q", rest.String(), want)
	}
}
