package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

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
		{"compare", "--json", filepath.Join(fixtures, "schema-v1.json"), filepath.Join(fixtures, "schema-v4.json")},
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
		// A 1 ns op timeout would make the liveness probe report a false deadlock.
		{[]string{"run", "--strategy", "token-lua", "--op-timeout", "1ns"}, "--op-timeout 1ns: want at least 1ms"},
		{[]string{"run", "--strategy", "token-lua", "--op-timeout", "999us"}, "--op-timeout 999µs: want at least 1ms"},
		// A 1 ns check timeout would make every check inconclusive.
		{[]string{"run", "--strategy", "token-lua", "--check-timeout", "1ns"}, "--check-timeout 1ns: want at least 100ms"},
		{[]string{"run", "--strategy", "token-lua", "--check-timeout", "99ms"}, "--check-timeout 99ms: want at least 100ms"},
		// --ttl 1000h would make the default critical section 50 h: the run would hang.
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
		// Not a strategy name: no "--strategy 5s" suggestion.
		{[]string{"run", "--ttl", "100ms", "5s"}, `unexpected argument "5s": lockbench run takes flags only, each with one value (e.g. --ttl 100ms); remove it or give it to its flag, and name the strategy with --strategy NAME`},
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
// README does: 130, 3 for an overloaded harness, and 4 for inconclusive
// below 1 in precedence.
func TestHelpExitCodes(t *testing.T) {
	for _, cmd := range []string{"run", "bench"} {
		code, text := run(t, nil, cmd, "--help")
		for _, want := range []string{"130 interrupted", "harness too overloaded to trust", "2\nusage error", "4 inconclusive", "1 wins over 4"} {
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

// TestBenchSkippedPairsSaid: every pair a bench skips gets an n/a line
// with its reason, whatever made it n/a (the verdict table or the
// backend), and a named scenario none of whose pairs can run is refused
// (exit 2) naming it, as a named strategy that cannot run is.
func TestBenchSkippedPairsSaid(t *testing.T) {
	addr, _ := startRedis(t)
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"n/a by the verdict table", []string{"--scenarios", "redlock-clock-jump", "--strategies", "token-lua"},
			[]string{"n/a token-lua/redlock-clock-jump: not applicable: ", "--scenarios redlock-clock-jump: none of the selected strategies can run it"}},
		{"n/a on the external backend", []string{"--backend", "external", "--redis-addrs", addr, "--scenarios", "baseline,node-restart"},
			[]string{"n/a node-restart for naive, set-nx-px, token-lua, watchdog, reentrant, fenced, redsync-single, redislock: scenario node-restart cannot run on the external backend", "--scenarios node-restart: none of the selected strategies can run it on the external backend"}},
	} {
		out := t.TempDir()
		code, text := run(t, nil, append(append([]string{"bench"}, tt.args...), "--out", out)...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2:\n%s", tt.name, code, text)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, text)
			}
		}
		if _, err := os.Stat(filepath.Join(out, results.FileName)); err == nil {
			t.Errorf("%s: a refused bench wrote results", tt.name)
		}
	}
}

// TestDiffUsage: lockbench diff refuses, before running anything, a
// missing B, an unknown scenario, a scenario that does not apply to both
// locks and a bad --max-regression (exit 2, one line naming the fix).
func TestDiffUsage(t *testing.T) {
	out := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "token-lua"}, "want two arguments, A and B"},
		{[]string{"diff", "token-lua", "watchdog", "--scenario", "nosuch", "--out", out}, "unknown scenario"},
		{[]string{"diff", "token-lua", "redlock", "--scenario", "redlock-clock-jump", "--out", out}, "does not apply to A"},
		{[]string{"diff", "token-lua", "watchdog", "--scenario", "baseline", "--max-regression", "x", "--out", out}, "regression"},
	} {
		code, text := run(t, nil, tt.args...)
		if code != 2 || !strings.Contains(text, tt.want) {
			t.Errorf("lockbench %s: exit %d, output %q; want exit 2 with %q", strings.Join(tt.args, " "), code, text, tt.want)
		}
	}
}
