package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestLibraryFlagErrors: library flags with impossible values, or given to
// a strategy that is not their library's adapter, are usage errors (exit
// 2, one line naming the flag), before any redis-server starts.
func TestLibraryFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "token-lua", "--redsync-tries", "3"}, "--redsync-tries applies only to redsync, redsync-single, not to strategy token-lua"},
		{[]string{"--strategy", "redsync", "--redislock-refresh", "off"}, "--redislock-refresh applies only to redislock, redislock-cluster, not to strategy redsync"},
		{[]string{"--strategy", "redsync", "--redsync-tries", "0"}, "--redsync-tries 0: want at least 1 attempt"},
		{[]string{"--strategy", "redsync", "--redsync-drift-factor", "1.5"}, "--redsync-drift-factor 1.5: want a factor with 0 <= f < 1"},
		{[]string{"--strategy", "redsync-single", "--redsync-retry-delay", "10ms"}, "add --redsync-tries 2 or more"},
		{[]string{"--strategy", "redsync", "--redsync-fail-fast=maybe"}, "--redsync-fail-fast maybe: want true or false"},
		{[]string{"--strategy", "redislock", "--redislock-refresh", "150ms"}, "--redislock-refresh 150ms: a refresh at or after the TTL comes too late"},
	} {
		code, out := run(t, nil, append([]string{"run", "--out", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(out, tc.want) || strings.Count(strings.TrimSpace(out), "\n") > 0 {
			t.Errorf("lockbench run %v: exit %d, output %q: want exit 2 and one line with %q", tc.args, code, out, tc.want)
		}
	}
}

// TestLibraryFlagsRecorded: a run of a library adapter records its library
// version and its effective library settings (flags and defaults) in
// results.json, and the report names the version.
func TestLibraryFlagsRecorded(t *testing.T) {
	out := t.TempDir()
	code, text := run(t, nil, "run", "--strategy", "redsync-single", "--duration", "300ms", "--clients", "4",
		"--redsync-tries", "2", "--redsync-retry-delay", "5ms", "--redsync-fail-fast", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, text)
	}
	f, err := results.Load(filepath.Join(out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	lib := f.Runs[0].Config.Library
	want := map[string]string{"redsync-tries": "2", "redsync-retry-delay": "5ms", "redsync-fail-fast": "true", "redsync-drift-factor": "0.01", "redsync-timeout-factor": "0.05"}
	for k, v := range want {
		if lib[k] != v {
			t.Errorf("config.library[%s] = %q, want %q (all: %v)", k, lib[k], v, lib)
		}
	}
	if got := f.Strategies[0].Library; !strings.HasPrefix(got, "github.com/go-redsync/redsync/v4 v4.") {
		t.Errorf("strategies[0].library = %q, want the redsync module and version", got)
	}
	if f.Runs[0].Expected != "at-risk" {
		t.Errorf("a run with library settings changed is %s, want at-risk (not gated)", f.Runs[0].Expected)
	}
	if got := f.Strategies[0].Summary; !strings.Contains(got, "redsync/v4 on one node") {
		t.Errorf("strategies[0].summary = %q: want redsync-single's", got)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), f.Strategies[0].Library) {
		t.Errorf("report.md does not name %q (%v)", f.Strategies[0].Library, err)
	}
}

// TestLibrarySettingsChangeClaims: with --redislock-refresh off the run's
// strategy description claims no renewal and its policy checks nothing.
func TestLibrarySettingsChangeClaims(t *testing.T) {
	out := t.TempDir()
	code, text := run(t, nil, "run", "--strategy", "redislock", "--duration", "300ms", "--clients", "4", "--redislock-refresh", "off", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, text)
	}
	f, err := results.Load(filepath.Join(out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Strategies[0]; strings.Contains(strings.Join(s.Claims, ","), "renewal") || len(s.Policy) != 0 || len(f.Runs[0].Config.Policy) != 0 {
		t.Errorf("strategy %+v, run policy %v: want no renewal claim and no policy with the refresh off", s, f.Runs[0].Config.Policy)
	}
	if !strings.Contains(text, "not gated: library settings changed (--redislock-refresh off)") {
		t.Errorf("output does not say the run is not gated and why:\n%s", text)
	}
}
