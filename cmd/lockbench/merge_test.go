package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
)

// writeParts writes count parts of a two-run bench into folders under
// root, each a copy of figures/testdata/baseline-run's run with seed
// Index and its history, edit applied to each part's File first; it
// returns the folders.
func writeParts(t *testing.T, root string, count int, edit func(i int, f *results.File)) []string {
	t.Helper()
	src := filepath.Join("..", "..", "figures", "testdata", "baseline-run")
	hist, err := os.ReadFile(filepath.Join(src, "histories", "token-lua-baseline-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i := 1; i <= count; i++ {
		f, err := results.Load(filepath.Join(src, results.FileName))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, fmt.Sprint("part", i))
		r := f.Runs[0]
		r.Seed = int64(i)
		r.History = fmt.Sprintf("histories/token-lua-baseline-%d.jsonl", i)
		f.Runs = []results.Run{r}
		f.Profile, f.Commit, f.Command = "tiny", "abc", fmt.Sprintf("lockbench bench --profile tiny --seed 1 --repeat 1 --shard %d/%d --out %s", i, count, dir)
		f.Shard = &results.ShardInfo{Index: i, Count: count, Planned: count, Runs: []int{i - 1}}
		if edit != nil {
			edit(i, f)
		}
		if err := figures.Write(dir, f); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "histories"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, r.History), hist, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// TestMergeGate: merging the parts of a bench gives the bench's gate:
// exit 0 with every run as expected, 1 when a part holds an unexpected
// run; the merged results.json holds every part's runs in plan order,
// without --shard in its command, and the merged folder every history.
func TestMergeGate(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(i int, f *results.File)
		want int
	}{
		{"as expected", nil, exitOK},
		{"unexpected in part 2", func(i int, f *results.File) {
			if i == 2 {
				f.Runs[0].AsExpected, f.Runs[0].Verdict.Exclusion = false, "violated"
				f.Runs[0].Unexpected = []string{"exclusion must hold: violated"}
			}
		}, exitUnexpected},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dirs := writeParts(t, root, 2, tt.edit)
			out := filepath.Join(root, "merged")
			code, text := run(t, nil, "merge", dirs[1], dirs[0], "--out", out)
			if code != tt.want {
				t.Fatalf("merge: exit %d, want %d:\n%s", code, tt.want, text)
			}
			f, err := results.Load(filepath.Join(out, results.FileName))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Runs) != 2 || f.Runs[0].Seed != 1 || f.Runs[1].Seed != 2 || f.Shard != nil || len(f.Shards) != 2 {
				t.Fatalf("merged: %d runs (seeds in plan order?), shard %v, %d shards", len(f.Runs), f.Shard, len(f.Shards))
			}
			if strings.Contains(f.Command, "--shard") || !strings.Contains(f.Command, "--out "+out) {
				t.Errorf("merged command %q: want no --shard and --out %s", f.Command, out)
			}
			for _, r := range f.Runs {
				if _, err := os.Stat(filepath.Join(out, r.History)); err != nil {
					t.Errorf("merged folder lacks %s: %v", r.History, err)
				}
			}
		})
	}
}

// TestMergeRefuses: parts of different benches, a part given twice, a
// missing part, an interrupted part and a folder that is no part are
// refused with exit 2 and one line naming the folder and the field.
func TestMergeRefuses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		edit  func(i int, f *results.File)
		parts func(dirs []string) []string
		want  string
	}{
		{"other seed", func(i int, f *results.File) { f.Seed += int64(i) }, nil, "field seed"},
		{"other profile", func(i int, f *results.File) {
			if i == 2 {
				f.Profile = "full"
			}
		}, nil, "field profile"},
		{"other commit", func(i int, f *results.File) { f.Commit = fmt.Sprint("c", i) }, nil, "field commit"},
		{"other count", func(i int, f *results.File) {
			if i == 2 {
				f.Shard.Count = 3
			}
		}, nil, "field shard.count"},
		{"other config", func(i int, f *results.File) {
			if i == 2 {
				f.Config.Scenarios = []string{"gc-pause"}
			}
		}, nil, "field config"},
		{"duplicate", nil, func(d []string) []string { return []string{d[0], d[0], d[1]} }, "both part 1/2"},
		{"missing", nil, func(d []string) []string { return d[:1] }, "part 2/2 missing"},
		{"incomplete", func(i int, f *results.File) {
			if i == 1 {
				f.Incomplete = "stopped after 0 of 1 runs: interrupted"
			}
		}, nil, "field incomplete"},
		{"not a part", func(i int, f *results.File) {
			if i == 2 {
				f.Shard = nil
			}
		}, nil, "field shard is absent"},
		{"no results", nil, func(d []string) []string { return []string{d[0], filepath.Dir(d[0])} }, "holds no results.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dirs := writeParts(t, root, 2, tt.edit)
			if tt.parts != nil {
				dirs = tt.parts(dirs)
			}
			code, text := run(t, nil, append(append([]string{"merge"}, dirs...), "--out", filepath.Join(root, "merged"))...)
			if code != exitUsage || !strings.Contains(text, tt.want) || strings.Count(strings.TrimSpace(text), "\n") > 0 {
				t.Fatalf("merge: exit %d, want %d and one line with %q:\n%s", code, exitUsage, tt.want, text)
			}
			if _, err := os.Stat(filepath.Join(root, "merged")); err == nil {
				t.Errorf("a refused merge made its --out folder")
			}
		})
	}
}
