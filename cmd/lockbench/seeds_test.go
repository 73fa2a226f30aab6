package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestRepeatSeedCommands: run --repeat records for each seed the command
// that reproduces that seed alone (--seed S, no --repeat) into its own
// folder (--out DIR/seed-S, so pasting it keeps the other seeds' files);
// the file's command keeps --repeat and --out DIR.
func TestRepeatSeedCommands(t *testing.T) {
	out := t.TempDir()
	args := []string{"run", "--strategy", "token-lua", "--ttl", "1s", "--cs-min", "5ms", "--retry", "exponential:1ms:10ms", "--duration", "200ms", "--clients", "4", "--seed", "5", "--repeat", "2", "--out", out}
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
		want := fmt.Sprintf("lockbench run --strategy token-lua --ttl 1s --cs-min 5ms --retry exponential:1ms:10ms --duration 200ms --clients 4 --seed %d --out %s", r.Seed, filepath.Join(out, fmt.Sprintf("seed-%d", r.Seed)))
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
