package outdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
)

// TestRemoveEarlier: the files of the run a folder's results.json lists are
// removed (history, visualisations, plots, reports, the file itself) and
// nothing else: not a user's file, not a path outside the folder, not a
// folder that still holds something.
func TestRemoveEarlier(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	outside := filepath.Join(parent, "outside.jsonl")
	files := map[string]bool{ // path relative to dir → removed?
		"histories/a-b-1.jsonl":         true,
		"histories/a-b-1.html":          true,
		"histories/a-b-1-resource.html": true,
		"histories/sweep-4.jsonl":       true,
		"histories/unlisted.jsonl":      false,
		"histories/notes.txt":           false,
		"plots/throughput.png":          true,
		"plots/throughput.svg":          true,
		"plots/keep.txt":                false,
		"report.md":                     true,
		"index.html":                    true,
		"mine.txt":                      false,
	}
	for p := range files {
		mustWrite(t, filepath.Join(dir, p), "x")
	}
	mustWrite(t, outside, "x")
	f := &results.File{Profile: "run", Started: "2026-12-01T00:00:00Z",
		Runs:  []results.Run{{History: "histories/a-b-1.jsonl", Visualization: "histories/a-b-1.html"}, {History: "../outside.jsonl"}},
		Sweep: []results.Run{{History: "histories/sweep-4.jsonl"}}}
	if err := figures.Write(dir, f); err != nil {
		t.Fatal(err)
	}
	old, err := RemoveEarlier(dir)
	if err != nil || old == nil || old.Profile != "run" {
		t.Fatalf("RemoveEarlier = %v, %v; want the earlier File", old, err)
	}
	for p, removed := range files {
		_, err := os.Stat(filepath.Join(dir, p))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s: removed %v, want %v", p, gone, removed)
		}
	}
	for _, p := range []string{outside, filepath.Join(dir, results.FileName)} {
		_, err := os.Stat(p)
		if want := p != outside; os.IsNotExist(err) != want {
			t.Errorf("%s: removed %v, want %v", p, os.IsNotExist(err), want)
		}
	}
	// A folder without results.json: nothing to do.
	if old, err := RemoveEarlier(dir); old != nil || err != nil {
		t.Errorf("second RemoveEarlier = %v, %v; want nil, nil", old, err)
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
