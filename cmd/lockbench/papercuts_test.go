package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

// startRedis starts a redis-server on a free loopback port with extra
// arguments (e.g. --enable-debug-command no), waits until it answers and
// returns its address and a client; the test's cleanup kills it.
func startRedis(t *testing.T, extra ...string) (string, *redis.Client) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, extra...)
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	rc := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rc.Close() })
	deadline := time.Now().Add(5 * time.Second)
	for rc.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s does not answer", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, rc
}

// TestExternalStaleKeys: keys already under the key prefix on an external
// server refuse the run (exit 2) naming the count, the server, a key and
// both fixes; a run under another prefix works, deletes its own keys, and
// so a second run with that prefix works too; the other keys stay. With
// --shared-keys (several lockbench machines on the same keys) a key under
// the prefix is no refusal and the run's keys stay.
func TestExternalStaleKeys(t *testing.T) {
	addr, rc := startRedis(t)
	ctx := context.Background()
	for _, k := range []string{"lb:k0", "lb:k0:fence", "app:user:1"} {
		if err := rc.Set(ctx, k, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"run", "--strategy", "fenced", "--backend", "external", "--redis-addrs", addr, "--ttl", "50ms", "--duration", "300ms", "--clients", "4"}
	out := filepath.Join(t.TempDir(), "out")
	code, text := run(t, nil, append(base, "--out", out)...)
	want := fmt.Sprintf(`external: 2 keys under "lb:" already exist on %s (e.g. lb:k0): a stale lock reads as a deadlock; delete them (redis-cli -h 127.0.0.1 -p %s --scan --pattern 'lb:*'`, addr, addr[strings.LastIndex(addr, ":")+1:])
	if code != 2 || !strings.Contains(text, want) || !strings.Contains(text, "or pass another --key-prefix") {
		t.Fatalf("stale keys: exit %d, output %q; want exit 2 and %q", code, text, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused run made its --out %s", out)
	}
	for i := range 2 {
		code, text := run(t, nil, append(base, "--key-prefix", "lbtest:", "--out", t.TempDir())...)
		if code != 0 {
			t.Fatalf("run %d under a fresh prefix: exit %d:\n%s", i+1, code, text)
		}
		left, err := rc.Keys(ctx, "lbtest:*").Result()
		if err != nil || len(left) > 0 {
			t.Errorf("after run %d: keys under lbtest: left %v (%v); want none", i+1, left, err)
		}
	}
	if n, err := rc.Exists(ctx, "lb:k0", "lb:k0:fence", "app:user:1").Result(); err != nil || n != 3 {
		t.Errorf("keys lockbench did not write: %d of 3 left (%v)", n, err)
	}
	if err := rc.Set(ctx, "lbshared:other", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if code, text := run(t, nil, append(base, "--key-prefix", "lbshared:", "--shared-keys", "--out", t.TempDir())...); code != 0 {
		t.Fatalf("--shared-keys over a key under the prefix: exit %d:\n%s", code, text)
	}
	if n, err := rc.Exists(ctx, "lbshared:other", "lbshared:k0:fence").Result(); err != nil || n != 2 {
		t.Errorf("--shared-keys: %d of 2 keys under the prefix left (%v); want them kept", n, err)
	}
}

// TestExternalDebugDisabled: node-pause on an external server whose DEBUG
// command is disabled (Redis 7's default) is refused before the run with
// exit 3 naming the server and the setting; bench refuses the same way.
func TestExternalDebugDisabled(t *testing.T) {
	addr, _ := startRedis(t, "--enable-debug-command", "no")
	for _, args := range [][]string{
		{"run", "--strategy", "set-nx-px", "--scenario", "node-pause", "--ttl", "50ms", "--duration", "300ms", "--clients", "4"},
		{"bench", "--profile", "full", "--strategies", "set-nx-px", "--scenarios", "baseline,node-pause"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args = append(args, "--backend", "external", "--redis-addrs", addr, "--allow-destructive", "--out", out)
		code, text := run(t, nil, args...)
		if code != 3 || !strings.Contains(text, "external server "+addr+" refuses DEBUG SLEEP") || !strings.Contains(text, "enable-debug-command yes") {
			t.Errorf("%s: exit %d, output %q; want exit 3 naming the server and enable-debug-command", args[0], code, text)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a refused run made its --out", args[0])
		}
	}
}

// TestExternalUnreachable: an external node that does not answer is an
// environment error (exit 3) whose message names the package once, and
// it leaves no histories/ folder behind.
func TestExternalUnreachable(t *testing.T) {
	out := t.TempDir()
	code, text := run(t, nil, "run", "--strategy", "token-lua", "--backend", "external", "--redis-addrs", "127.0.0.1:1", "--out", out)
	if code != 3 || !strings.Contains(text, "127.0.0.1:1") || strings.Contains(text, "cluster: environment error: cluster:") || !strings.Contains(text, "environment error: cluster: external") {
		t.Errorf("exit %d, output %q; want exit 3 naming the address, \"cluster:\" once", code, text)
	}
	if _, err := os.Stat(filepath.Join(out, "histories")); err == nil {
		t.Errorf("an external run that could not start left %s", filepath.Join(out, "histories"))
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

// TestRepeatSeedCommands: run --repeat records for each seed the command
// that reproduces that seed alone (--seed S, no --repeat) into its own
// folder (--out DIR/seed-S, so pasting it keeps the other seeds' files);
// the file's command keeps --repeat and --out DIR.
func TestRepeatSeedCommands(t *testing.T) {
	out := t.TempDir()
	args := []string{"run", "--strategy", "token-lua", "--ttl", "50ms", "--duration", "200ms", "--clients", "4", "--seed", "5", "--repeat", "2", "--out", out}
	if code, text := run(t, nil, args...); code != 0 {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	f, err := results.Load(filepath.Join(out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Command, "--repeat 2") {
		t.Errorf("file command %q lost --repeat", f.Command)
	}
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(f.Runs))
	}
	for _, r := range f.Runs {
		want := fmt.Sprintf("lockbench run --strategy token-lua --ttl 50ms --duration 200ms --clients 4 --seed %d --out %s", r.Seed, filepath.Join(out, fmt.Sprintf("seed-%d", r.Seed)))
		if r.Command != want {
			t.Errorf("seed %d command %q, want %q", r.Seed, r.Command, want)
		}
	}
}

// TestSeedBounds: run and bench share one seed validation: a seed below 1,
// or one whose last repeat would overflow int64, is a usage error (exit 2)
// naming the largest seed that works.
func TestSeedBounds(t *testing.T) {
	max := "9223372036854775807"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--strategy", "token-lua", "--seed", max, "--repeat", "2"}, "use a --seed of at most 9223372036854775806"},
		{[]string{"bench", "--seed", max, "--repeat", "2"}, "use a --seed of at most 9223372036854775806"},
		{[]string{"run", "--strategy", "token-lua", "--seed", "0"}, "--seed 0: want a seed ≥ 1"},
		{[]string{"bench", "--seed", "0"}, "--seed 0: want a seed ≥ 1"},
		{[]string{"bench", "--profile", "full", "--seed", "9223372036854775000"}, "client sweep's seeds"},
		// A huge repeat once planned 24 GB of runs before the first.
		{[]string{"bench", "--repeat", "1000000000"}, "--repeat 1000000000: want at most 1000"},
		{[]string{"run", "--strategy", "token-lua", "--repeat", "1001"}, "--repeat 1001: want at most 1000"},
	}
	for _, tt := range tests {
		code, text := run(t, nil, append(tt.args, "--out", t.TempDir())...)
		if code != 2 || !strings.Contains(text, tt.want) {
			t.Errorf("lockbench %s: exit %d, output %q; want exit 2 and %q", strings.Join(tt.args, " "), code, text, tt.want)
		}
	}
}

// TestUnknownCommand: a command that does not exist is a one-line usage
// error listing the commands, with a suggestion when one is close.
func TestUnknownCommand(t *testing.T) {
	for _, tt := range []struct{ arg, want string }{
		{"nosuchcmd", `unknown command "nosuchcmd"; commands: bench, check, compare`},
		{"rn", `unknown command "rn" (did you mean run?); commands: bench`},
	} {
		code, text := run(t, nil, tt.arg)
		if code != 2 || !strings.Contains(text, tt.want) || strings.Count(strings.TrimSpace(text), "\n") > 0 {
			t.Errorf("lockbench %s: exit %d, output %q; want exit 2 and one line with %q", tt.arg, code, text, tt.want)
		}
	}
}

// TestJSONErrors: a command run with --json that fails before printing its
// summary prints a JSON object with the error and exit code on stdout.
func TestJSONErrors(t *testing.T) {
	fixtures := filepath.Join("..", "..", "results", "testdata")
	for _, args := range [][]string{
		{"run", "--strategy", "nope", "--json"},
		{"run", "--bogus", "--json"},
		{"bench", "--profile", "huge", "--json"},
		{"check", "--json", "/no/such/file.jsonl"},
		{"compare", "--json", filepath.Join(fixtures, "schema-v1.json"), filepath.Join(fixtures, "schema-v2.json")},
	} {
		code, stdout, stderr := runSplit(t, args...)
		var got struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 2 || got.Error == "" || got.ExitCode != 2 || !strings.Contains(stderr, got.Error) {
			t.Errorf("lockbench %s: exit %d, stdout %q (%v), stderr %q; want exit 2 and {\"error\": ..., \"exit_code\": 2}", strings.Join(args, " "), code, stdout, err, stderr)
		}
	}
	// Without --json stdout stays empty.
	if _, stdout, _ := runSplit(t, "run", "--strategy", "nope"); stdout != "" {
		t.Errorf("without --json: stdout %q, want nothing", stdout)
	}
}

// TestReportFilePath: report given DIR/results.json takes DIR; given
// another file it says what it wants.
func TestReportFilePath(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "results", "testdata", "schema-v2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, text := run(t, nil, "report", filepath.Join(dir, "results.json")); code != 0 || !strings.Contains(text, filepath.Join(dir, "report.md")) {
		t.Errorf("report DIR/results.json: exit %d, output %q; want exit 0 and the report in DIR", code, text)
	}
	other := filepath.Join(dir, "report.md")
	if code, text := run(t, nil, "report", other); code != 2 || !strings.Contains(text, "report takes the directory holding results.json (did you mean "+dir+"?)") {
		t.Errorf("report FILE: exit %d, output %q; want exit 2 naming the directory", code, text)
	}
	hist := filepath.Join(dir, "histories", "a-b-1.jsonl")
	if err := os.MkdirAll(filepath.Dir(hist), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hist, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, text := run(t, nil, "report", hist); code != 2 || !strings.Contains(text, "(did you mean "+dir+"?); to check a history, lockbench check "+hist) {
		t.Errorf("report HISTORY: exit %d, output %q; want exit 2 naming the results folder and check", code, text)
	}
}

// TestCheckTruncatedHistory: a history cut mid-line is a usage error
// naming the file, the line and the fix.
func TestCheckTruncatedHistory(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "checker", "testdata", "clean-sequential.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	code, text := run(t, nil, "check", cut)
	for _, want := range []string{cut + ": history: corrupt file: line ", "rerun the run that wrote it"} {
		if code != 2 || !strings.Contains(text, want) {
			t.Errorf("exit %d, output %q; want exit 2 and %q", code, text, want)
		}
	}
}

// TestVersion: --version prints the version, whose minor number follows
// the results.json schema it writes.
func TestVersion(t *testing.T) {
	code, text := run(t, nil, "--version")
	if code != 0 || strings.TrimSpace(text) != "lockbench "+bench.Version {
		t.Errorf("--version: exit %d, output %q", code, text)
	}
	parts := strings.Split(bench.Version, ".")
	if len(parts) != 3 || parts[1] != strconv.Itoa(results.SchemaVersion) {
		t.Errorf("version %s: its minor must be the results schema version %d", bench.Version, results.SchemaVersion)
	}
}

// TestCheckAgreesWithRun: a run whose flags leave the strategy's defaults
// (--policy none) is ungated, and lockbench check of its history says the
// same (it had judged it against the verdict table); the same history cut
// at a line boundary, as a killed run leaves it, is refused, not judged.
func TestCheckAgreesWithRun(t *testing.T) {
	out := t.TempDir()
	code, text := run(t, nil, "run", "--strategy", "watchdog", "--scenario", "long-cs", "--policy", "none",
		"--duration", "300ms", "--clients", "4", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, text)
	}
	hist := filepath.Join(out, "histories", "watchdog-long-cs-1.jsonl")
	code, text = run(t, nil, "check", hist)
	if code != 0 || !strings.Contains(text, "custom usage policy (--policy)") {
		t.Errorf("check of an ungated run's history: exit %d, output %q; want exit 0 and the reason it is ungated", code, text)
	}
	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)/2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, text = run(t, nil, "check", cut)
	if code != 2 || !strings.Contains(text, "cut short after line") {
		t.Errorf("check of a history cut at a line boundary: exit %d, output %q; want exit 2 and \"cut short\"", code, text)
	}
}

// TestRunFlagLimits: a strategy or scenario given twice (pflag would keep
// the last silently) and a --duration above the limit are usage errors.
func TestRunFlagLimits(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--strategy", "token-lua", "--strategy", "redlock"}, `given twice ("token-lua", then "redlock")`},
		{[]string{"run", "--strategy", "token-lua", "--scenario", "long-cs", "--scenario", "gc-pause"}, "lockbench bench --scenarios A,B runs several"},
		{[]string{"run", "--strategy", "token-lua", "--duration", "10000h"}, "--duration 10000h0m0s: want at most 1h0m0s"},
		// A 1 ns op timeout made the liveness probe report a false deadlock.
		{[]string{"run", "--strategy", "token-lua", "--op-timeout", "1ns"}, "--op-timeout 1ns: want at least 1ms"},
		{[]string{"run", "--strategy", "token-lua", "--op-timeout", "999us"}, "--op-timeout 999µs: want at least 1ms"},
		// A 1 ns check timeout made every check inconclusive (exit 1).
		{[]string{"run", "--strategy", "token-lua", "--check-timeout", "1ns"}, "--check-timeout 1ns: want at least 100ms"},
		{[]string{"run", "--strategy", "token-lua", "--check-timeout", "99ms"}, "--check-timeout 99ms: want at least 100ms"},
		// --ttl 1000h made the default critical section 50 h: the run hung.
		{[]string{"run", "--strategy", "token-lua", "--ttl", "1000h"}, "--ttl 1000h0m0s: want at most 1h0m0s"},
		{[]string{"run", "--strategy", "token-lua", "--ttl", "1h"}, "a critical section of up to 3m0s (fixed(3m0s)) is longer than the duration 2s"},
		{[]string{"run", "--strategy", "token-lua", "--cs-min", "3s"}, "a critical section of up to 3s (fixed(3s)) is longer than the duration 2s"},
		{[]string{"run", "--strategy", "token-lua", "--cs", "uniform", "--cs-max", "5s"}, "up to 5s (uniform(5ms,5s)) is longer than the duration 2s"},
		{[]string{"run", "--strategy", "token-lua", "--ttl", "2s", "--cs-tail", "0.1"}, "up to 4s"},
		// --cs-max below the default --cs-min (TTL/20), for both bounded distributions.
		{[]string{"run", "--strategy", "token-lua", "--cs", "uniform", "--cs-max", "1ms"}, "--cs-max 1ms is below the default --cs-min 5ms (TTL/20)"},
		{[]string{"run", "--strategy", "token-lua", "--cs", "exponential", "--cs-max", "1ms"}, "--cs-max 1ms is below the default --cs-min 5ms (TTL/20)"},
		{[]string{"run", "--strategy", "token-lua", "--cs", "exponential", "--cs-min", "5ms", "--cs-max", "1ms"}, "--cs-max 1ms is below --cs-min 5ms"},
		{[]string{"run", "--strategy", "token-lua", "--zipf"}, "Zipf key choice over 1 key: nothing to choose; give 2 or more keys (--keys)"},
		{[]string{"run", "--strategy", "token-lua", "--zipf", "--keys", "1"}, "Zipf key choice over 1 key"},
		// A stray argument once told to use --strategy, which was given.
		{[]string{"run", "--strategy", "redsync", "--redsync-fail-fast", "maybe"}, `unexpected argument "maybe" after --redsync-fail-fast: it is a bool flag and takes no separate value; write --redsync-fail-fast=false or --redsync-fail-fast=true`},
		{[]string{"run", "--strategy", "token-lua", "--zipf", "false"}, `unexpected argument "false" after --zipf: it is a bool flag and takes no separate value; write --zipf=false`},
		{[]string{"run", "--strategy", "token-lua", "--ttl", "100ms", "5s"}, `unexpected argument "5s": lockbench run takes flags only, each with one value`},
		{[]string{"run", "token-lua"}, `unexpected argument "token-lua": name the strategy with --strategy (e.g. lockbench run --strategy token-lua)`},
	} {
		code, text := run(t, nil, append(tt.args, "--out", t.TempDir())...)
		if code != 2 || !strings.Contains(text, tt.want) {
			t.Errorf("lockbench %s: exit %d, output %q; want exit 2 and %q", strings.Join(tt.args, " "), code, text, tt.want)
		}
		if slices.Contains(tt.args, "--strategy") && strings.Contains(text, "name the strategy with --strategy") {
			t.Errorf("lockbench %s: %q suggests --strategy, which was given", strings.Join(tt.args, " "), text)
		}
	}
}

// TestEmptyInputs: an explicitly empty --out, --strategies, --scenarios or
// path argument is a usage error (exit 2) naming it, before anything runs
// (an empty --strategies once ran every strategy; an empty --out failed
// with exit 3 after the run).
func TestEmptyInputs(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--strategy", "token-lua", "--out", ""}, "--out must not be empty"},
		{[]string{"bench", "--out", ""}, "--out must not be empty"},
		{[]string{"perf", "--out", ""}, "--out must not be empty"},
		{[]string{"report", ""}, "DIR must not be empty"},
		{[]string{"check", ""}, "HISTORY.jsonl must not be empty"},
		{[]string{"bench", "--strategies", ""}, "--strategies is empty: name at least one"},
		{[]string{"bench", "--scenarios", ""}, "--scenarios is empty: name at least one"},
		{[]string{"bench", "--strategies=", "--scenarios", "baseline"}, "--strategies is empty"},
		{[]string{"list", "--matrix", "--markdown"}, "usage error: --matrix and --markdown both print the verdict matrix: choose one"},
	} {
		start := time.Now()
		code, text := run(t, nil, tt.args...)
		if code != 2 || !strings.HasPrefix(text, "lockbench: usage error: ") || !strings.Contains(text, tt.want) || strings.Count(strings.TrimSpace(text), "\n") > 0 {
			t.Errorf("lockbench %q: exit %d, output %q; want exit 2 and one line with %q", tt.args, code, text, tt.want)
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("lockbench %q took %v: it ran before refusing", tt.args, time.Since(start))
		}
	}
}

// TestHelpExitCodes: run --help and bench --help list every exit code the
// README does: 130, and 3 for an overloaded harness.
func TestHelpExitCodes(t *testing.T) {
	for _, cmd := range []string{"run", "bench"} {
		code, text := run(t, nil, cmd, "--help")
		for _, want := range []string{"130 interrupted", "harness too overloaded to trust", "2\nusage error"} {
			if code != 0 || !strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(want), " ")) {
				t.Errorf("%s --help: exit %d, no %q in %q", cmd, code, want, text)
			}
		}
	}
	// --redsync-fail-fast is a bool flag in help as in the README.
	_, text := run(t, nil, "run", "--help")
	if strings.Contains(text, `string[="true"]`) || !strings.Contains(text, "--redsync-fail-fast=false") {
		t.Errorf("run --help shows --redsync-fail-fast as a string flag: %q", text)
	}
}

// TestOutReplacesEarlierRun: a run into a folder that holds an earlier run
// says so and leaves only its own history there; a refused run (bad input)
// leaves the earlier run in place.
func TestOutReplacesEarlierRun(t *testing.T) {
	out := t.TempDir()
	common := []string{"--ttl", "50ms", "--duration", "200ms", "--clients", "2", "--out", out}
	if code, text := run(t, nil, append([]string{"run", "--strategy", "token-lua"}, common...)...); code != 0 {
		t.Fatalf("first run: exit %d:\n%s", code, text)
	}
	first := filepath.Join(out, "histories", "token-lua-baseline-1.jsonl")
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("first run's history: %v", err)
	}
	if code, text := run(t, nil, append([]string{"run", "--strategy", "naive", "--backend", "external", "--redis-addrs", "127.0.0.1:1"}, common...)...); code == 0 {
		t.Fatalf("run against an unreachable server: exit 0:\n%s", text)
	}
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("a refused run removed the earlier run's history: %v", err)
	}
	code, text := run(t, nil, append([]string{"run", "--strategy", "naive"}, common...)...)
	if code != 0 {
		t.Fatalf("second run: exit %d:\n%s", code, text)
	}
	if !strings.Contains(text, "held an earlier run") {
		t.Errorf("second run did not say it replaced the earlier run:\n%s", text)
	}
	entries, err := os.ReadDir(filepath.Join(out, "histories"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "naive-baseline-1.jsonl" {
		t.Errorf("histories after the second run: %v, want only naive-baseline-1.jsonl", names)
	}
}

// TestReportDistrustsEditedVerdicts: hand edits of results.json that
// lockbench cannot have written are reported, each with a warning naming
// the run: a run marked as expected although its stored verdict
// contradicts its expectation, or with a verdict value lockbench never
// writes ("banana"), is shown as unexpected; a run marked unexpected with
// no reason stays unexpected, and the warning says the file gives none.
func TestReportDistrustsEditedVerdicts(t *testing.T) {
	out := t.TempDir()
	if code, text := run(t, nil, "run", "--strategy", "token-lua", "--ttl", "50ms", "--duration", "200ms", "--clients", "2", "--out", out); code != 0 {
		t.Fatalf("run: exit %d:\n%s", code, text)
	}
	path := filepath.Join(out, results.FileName)
	orig, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(r *results.Run)
		want string
	}{
		{"contradiction", func(r *results.Run) { r.Verdict.Exclusion = "violated" }, // as_expected stays true
			"token-lua/baseline seed 1 is marked as expected in results.json, but exclusion must hold but is violated"},
		{"unknown verdict", func(r *results.Run) { r.Verdict.Exclusion = "banana" },
			`token-lua/baseline seed 1 has exclusion verdict "banana" is none of ok, violated, inconclusive, skipped in results.json`},
		{"unexpected without reason", func(r *results.Run) { r.AsExpected = false; r.Unexpected = nil },
			"token-lua/baseline seed 1 is marked unexpected in results.json without saying why"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := *orig
			f.Runs = append([]results.Run(nil), orig.Runs...)
			tt.edit(&f.Runs[0])
			if err := results.Write(out, &f); err != nil {
				t.Fatal(err)
			}
			code, text := run(t, nil, "report", out)
			if code != 0 || !strings.Contains(text, "warning: "+tt.want) {
				t.Errorf("report: exit %d, output %q; want exit 0 and a warning %q", code, text, tt.want)
			}
			md, err := os.ReadFile(filepath.Join(out, results.ReportMarkdown))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "1 run: 0 as expected, 1 unexpected.") {
				t.Errorf("report.md does not show the edited run as unexpected:\n%.400s", md)
			}
		})
	}
}

// TestExternalSameServerManyNames: one server given under addresses no
// lookup relates (0.0.0.0, 127.0.0.x) is refused before the run (exit 2)
// by its run_id, naming both addresses: five names for one server are no
// quorum (redlock used to run, grant nothing and blame the lock). Spaces
// around an address are trimmed and ports compare as numbers; two
// distinct servers written with spaces run.
func TestExternalSameServerManyNames(t *testing.T) {
	addr, _ := startRedis(t, "--bind", "0.0.0.0")
	other, _ := startRedis(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	var names []string
	for _, h := range []string{"127.0.0.1", "0.0.0.0", "127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		names = append(names, h+":"+port)
	}
	tests := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"five names", []string{"--strategy", "redlock", "--redis-addrs", strings.Join(names, ",")}, 2,
			[]string{"external: 127.0.0.1:" + port + " and 0.0.0.0:" + port + " are the same server (run_id ", "): give 5 distinct servers"}},
		{"leading zero", []string{"--strategy", "token-lua", "--redis-addrs", addr + ", 127.0.0.1:0" + port}, 2,
			[]string{"--redis-addrs: 127.0.0.1:0" + port + " and " + addr + " are the same server (" + addr + "); give 2 distinct servers"}},
		{"spaces", []string{"--strategy", "token-lua", "--redis-addrs", addr + ", " + other + " "}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--backend", "external", "--ttl", "50ms", "--duration", "300ms", "--clients", "2", "--out", out}, tt.args...)
			code, text := run(t, nil, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; output %q", code, tt.code, text)
			}
			for _, w := range tt.wants {
				if !strings.Contains(text, w) {
					t.Errorf("output %q; want %q", text, w)
				}
			}
			if _, err := os.Stat(out); tt.code != 0 && err == nil {
				t.Errorf("a refused run made its --out %s", out)
			}
		})
	}
}

// TestOneClientUngated: one client cannot overlap itself, so a pair the
// verdict table expects to break is reported not gated (it used to fail
// its canary with exit 1), and check of its history agrees; a pair
// expected to hold stays gated. check refuses a --timeout below 100 ms.
func TestOneClientUngated(t *testing.T) {
	tests := []struct {
		scenario, expected string
		ungated            bool
	}{
		{"long-cs", "expected at-risk", true},
		{"baseline", "expected must-hold", false},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			out := t.TempDir()
			code, text := run(t, nil, "run", "--strategy", "token-lua", "--scenario", tt.scenario, "--clients", "1", "--out", out)
			const why = "1 client (--clients 1) cannot overlap itself"
			if code != 0 || !strings.Contains(text, tt.expected) || strings.Contains(text, why) != tt.ungated {
				t.Fatalf("run: exit %d, output %q; want exit 0, %q, ungated %v", code, text, tt.expected, tt.ungated)
			}
			hist := filepath.Join(out, "histories", "token-lua-"+tt.scenario+"-1.jsonl")
			code, text = run(t, nil, "check", hist)
			if code != 0 || !strings.Contains(text, tt.expected) || strings.Contains(text, why) != tt.ungated {
				t.Errorf("check: exit %d, output %q; want exit 0, %q, ungated %v", code, text, tt.expected, tt.ungated)
			}
			code, text = run(t, nil, "check", "--timeout", "1ns", hist)
			if code != 2 || !strings.Contains(text, "--timeout 1ns: want at least 100ms") {
				t.Errorf("check --timeout 1ns: exit %d, output %q; want exit 2", code, text)
			}
		})
	}
}

// TestMissingPathsNameTheFix: check and report of a path that does not
// exist (or a folder without results.json) exit 2 naming what to give,
// as compare does, not a bare "open ...: no such file".
func TestMissingPathsNameTheFix(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexist")
	empty := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"check", missing}, missing + " does not exist: give a history file"},
		{[]string{"report", missing}, missing + " does not exist: give a results folder"},
		{[]string{"report", empty}, empty + " holds no results.json: give a results folder"},
	} {
		code, text := run(t, nil, tt.args...)
		if code != 2 || !strings.Contains(text, tt.want) {
			t.Errorf("lockbench %s: exit %d, output %q; want exit 2 and %q", strings.Join(tt.args, " "), code, text, tt.want)
		}
	}
}

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

// TestMissingRedisServerKeepsEarlierRun: with no redis-server to start,
// run and bench exit 3 before touching --out: an earlier run there stays.
func TestMissingRedisServerKeepsEarlierRun(t *testing.T) {
	out := t.TempDir()
	if code, text := run(t, nil, "run", "--strategy", "token-lua", "--ttl", "50ms", "--duration", "200ms", "--clients", "2", "--out", out); code != 0 {
		t.Fatalf("first run: exit %d:\n%s", code, text)
	}
	for _, args := range [][]string{
		{"run", "--strategy", "fenced", "--backend", "process", "--out", out},
		{"bench", "--strategies", "fenced", "--scenarios", "baseline", "--backend", "process", "--out", out},
	} {
		code, text := run(t, []string{"PATH=/nonexistent"}, args...)
		if code != 3 || !strings.Contains(text, "redis-server not found on PATH") || strings.Contains(text, "held an earlier run") {
			t.Errorf("%s without redis-server: exit %d, output %q; want exit 3 before replacing anything", args[0], code, text)
		}
		if _, err := os.Stat(filepath.Join(out, "histories", "token-lua-baseline-1.jsonl")); err != nil {
			t.Errorf("%s without redis-server removed the earlier run's history: %v", args[0], err)
		}
	}
}

// TestReportRefusesPerfResults: perf's results measure lockbench itself;
// report (which renders lock verdicts) refuses them with exit 2.
func TestReportRefusesPerfResults(t *testing.T) {
	dir := t.TempDir()
	if err := results.Write(dir, &results.File{Tool: "lockbench test", Profile: "perf", Runs: []results.Run{{Strategy: "redis-benchmark", Scenario: "perf-c50"}}}); err != nil {
		t.Fatal(err)
	}
	if code, text := run(t, nil, "report", dir); code != 2 || !strings.Contains(text, "holds the results of lockbench perf") {
		t.Errorf("report on perf results: exit %d, output %q; want exit 2 naming perf", code, text)
	}
}
