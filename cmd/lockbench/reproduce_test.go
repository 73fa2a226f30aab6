package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// shellWords returns the words a POSIX shell makes of line.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+line).Output()
	if err != nil {
		t.Fatalf("sh of %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// TestReproduceCommandsQuoted: a --out with a space and a quote is written
// into results.json (the file's command and each run's) and report.md so
// that a shell gives it back as one argument; plain arguments stay bare.
func TestReproduceCommandsQuoted(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sp ace", "o'ut")
	for _, args := range [][]string{
		{"run", "--strategy", "token-lua", "--ttl", "50ms", "--duration", "200ms", "--clients", "2", "--repeat", "2", "--out", out, "--quiet"},
		{"bench", "--strategies", "token-lua", "--scenarios", "baseline", "--out", out, "--quiet"},
	} {
		if code, text := run(t, nil, args...); code != 0 {
			t.Fatalf("%v: exit %d:\n%s", args, code, text)
		}
		f, err := results.Load(filepath.Join(out, results.FileName))
		if err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(out, results.ReportMarkdown))
		if err != nil {
			t.Fatal(err)
		}
		cmds := []string{f.Command}
		for _, r := range f.Runs {
			cmds = append(cmds, r.Command)
		}
		for _, c := range cmds {
			if !strings.HasPrefix(c, "lockbench ") {
				t.Fatalf("command %q does not start with lockbench", c)
			}
			words := shellWords(t, strings.TrimPrefix(c, "lockbench "))
			// run --repeat: the per-seed commands write to OUT/seed-S.
			want := out
			if args[0] == "run" && c != f.Command {
				want = filepath.Join(out, "seed-"+words[len(words)-3])
			}
			if args[0] == "run" && !containsWord(words, want) {
				t.Errorf("%s: command %q: the shell splits it into %q, want %q as one word", args[0], c, words, want)
			}
			if !strings.Contains(c, "--ttl 50ms") && args[0] == "run" {
				t.Errorf("plain arguments were quoted: %q", c)
			}
		}
		if args[0] == "bench" && !containsWord(shellWords(t, strings.TrimPrefix(f.Command, "lockbench ")), out) {
			t.Errorf("bench command %q does not give back --out %q", f.Command, out)
		}
		if !strings.Contains(string(md), f.Command) {
			t.Errorf("report.md does not hold the quoted command %q", f.Command)
		}
	}
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}
