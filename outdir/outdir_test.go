package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/results"
)

// TestOutputErrorAdvice: the fix depends on the cause, the file is named
// once, and the message says what was written.
func TestOutputErrorAdvice(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, ".results.json.12345")
	wrap := func(errno error) error {
		return fmt.Errorf("results: write %s: %w", filepath.Join(dir, "results.json"), &fs.PathError{Op: "write", Path: tmp, Err: errno})
	}
	for _, tt := range []struct {
		name    string
		err     error
		written bool
		want    []string
		not     []string
	}{
		{"full disk", wrap(syscall.ENOSPC), false, []string{"no space left", "free space", "choose another --out", "nothing was written"}, []string{"move away", "was written;"}},
		{"full disk after results.json", wrap(syscall.ENOSPC), true, []string{"free space", "results.json was written; the report"}, []string{"move away", "nothing was written"}},
		{"permission", wrap(syscall.EACCES), false, []string{"make the folder writable"}, []string{"move away", "free space"}},
		{"read-only", wrap(syscall.EROFS), false, []string{"read-only"}, []string{"move away"}},
		{"in the way", wrap(syscall.ENOTDIR), false, []string{"move away what is in the way"}, []string{"free space"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(dir, results.FileName))
			if tt.written {
				if err := os.WriteFile(filepath.Join(dir, results.FileName), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := OutputError(dir, tt.err, OutputFix)
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(msg, w) {
					t.Errorf("message %q has %q", msg, w)
				}
			}
			if n := strings.Count(msg, filepath.Join(dir, results.FileName)); n != 1 {
				t.Errorf("message %q names %s %d times, want once", msg, results.FileName, n)
			}
			if strings.Contains(msg, ".results.json.12345") {
				t.Errorf("message %q names the temporary file", msg)
			}
			if !errors.Is(err, ErrNotWritten) || !errors.Is(err, cluster.ErrEnvironment) || !errors.Is(err, tt.err) {
				t.Errorf("%v does not wrap ErrNotWritten, ErrEnvironment and the cause", err)
			}
		})
	}
}

// TestOutDirErrorAdvice: an --out that cannot be written gets the fix for
// its cause and names the folder once.
func TestOutDirErrorAdvice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, tt := range []struct {
		errno error
		want  string
	}{
		{syscall.ENOSPC, "free space"},
		{syscall.EACCES, "make the folder writable"},
		{syscall.EPERM, "make the folder writable"},
		{syscall.EEXIST, "move away what is in the way"},
	} {
		err := OutDirError(dir, &fs.PathError{Op: "mkdir", Path: dir, Err: tt.errno})
		msg := err.Error()
		if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "choose another --out") || strings.Count(msg, dir) != 1 {
			t.Errorf("%v: %q: want %q, another --out and %s once", tt.errno, msg, tt.want, dir)
		}
		if !errors.Is(err, cluster.ErrEnvironment) {
			t.Errorf("%v: not an environment error", err)
		}
	}
}

// TestOutDirErrorFile: an --out that is a file, or a folder under one,
// is named as such with the fix, not the advice about plots and
// results.json in the way.
func TestOutDirErrorFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub", "out")} {
		mkErr := os.MkdirAll(dir, 0o755)
		if mkErr == nil {
			t.Fatalf("MkdirAll(%s) under a file succeeded", dir)
		}
		err := OutDirError(dir, mkErr)
		want := file + " is a file, not a folder: choose another --out"
		if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "plots") || (dir == file && strings.Count(msg, file) != 1) {
			t.Errorf("--out %s: %q: want %q once and no advice about plots", dir, msg, want)
		}
		if !errors.Is(err, cluster.ErrEnvironment) {
			t.Errorf("%v: not an environment error", err)
		}
	}
}

// TestReplaceEarlierInterruptedHistories: ReplaceEarlier removes the
// histories whose end line says interrupted (also one carrying the run's
// clock measurement and largest stall), and nothing else.
func TestReplaceEarlierInterruptedHistories(t *testing.T) {
	dir := t.TempDir()
	hd := filepath.Join(dir, "histories")
	if err := os.MkdirAll(hd, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"stale.jsonl":       "{\"strategy\":\"x\"}\n{\"client\":1}\n{\"end_operations\":1,\"interrupted\":true}\n",
		"clocked.jsonl":     "{\"strategy\":\"x\"}\n{\"client\":1}\n{\"end_operations\":1,\"interrupted\":true,\"clock\":{\"server\":\"redis 10.0.0.5:6379 TIME\",\"offset_ns\":1796496793482761236,\"half_rtt_ns\":6332},\"max_stall_ns\":67000000}\n",
		"whole.jsonl":       "{\"strategy\":\"x\"}\n{\"client\":1}\n{\"end_operations\":1}\n",
		"cut.jsonl":         "{\"strategy\":\"x\"}\n{\"client\":1,\"interrupted\":true}\n",
		"mine.txt":          "{\"end_operations\":1,\"interrupted\":true}\n",
		"other.jsonl":       "{\"end_operations\":1,\"interrupted\":true,\"mine\":1}\n",
		"interrupted.jsonl": "{\"interrupted\":true}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(hd, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var notes []string
	if err := ReplaceEarlier(dir, func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(hd, name))
		stale := name == "stale.jsonl" || name == "clocked.jsonl"
		if gone := errors.Is(err, fs.ErrNotExist); gone != stale {
			t.Errorf("%s: removed %v, want %v", name, gone, stale)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "2 history file(s) of interrupted runs") {
		t.Errorf("notes %q, want one naming the interrupted history", notes)
	}
}

// TestReplaceEarlierRefusesForeignFiles: a folder holding a results.json
// or report lockbench did not write is refused (exit 2) and kept.
func TestReplaceEarlierRefusesForeignFiles(t *testing.T) {
	for _, tt := range []struct{ name, text string }{
		{results.FileName, `{"my":"data"}`},
		{results.FileName, `not json`},
		{results.FileName, `{"schema_version":3,"tool":"someone else"}`},
		{results.ReportMarkdown, "# my notes\n"},
		{results.ReportHTML, "<html></html>"},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		err := ReplaceEarlier(dir, nil)
		if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "choose another --out") {
			t.Errorf("%s %q: error %v, want a usage error naming %s and another --out", tt.name, tt.text, err, p)
		}
		if data, _ := os.ReadFile(p); string(data) != tt.text {
			t.Errorf("%s changed: %q", tt.name, data)
		}
	}
	// lockbench's own folder is replaced.
	dir := t.TempDir()
	if err := figures.Write(dir, &results.File{Tool: "lockbench test", Profile: "ci"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.ReportMarkdown), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var note string
	if err := ReplaceEarlier(dir, func(f string, a ...any) { note = fmt.Sprintf(f, a...) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "held an earlier bench (profile ci, started") {
		t.Errorf("note %q, want it to name an earlier bench", note)
	}
	if _, err := os.Stat(filepath.Join(dir, results.ReportMarkdown)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("report.md of the earlier bench kept: %v", err)
	}
}

// TestCheckWritable: a writable folder passes and is left as it was (a
// missing one is not left behind); a file in place of the folder fails.
func TestCheckWritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := CheckWritable(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
		t.Errorf("CheckWritable left %s behind (%v)", filepath.Dir(dir), err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(file); err == nil {
		t.Errorf("CheckWritable(a file) = nil")
	}
}
