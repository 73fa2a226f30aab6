package validate

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/synth"
)

var updateCheckGolden = flag.Bool("update-check-golden", false, "rewrite testdata/check-golden/*.golden.json from the current checker")

// checkGoldenDir holds saved histories (gzipped JSON Lines: recorded runs
// of several strategies and scenarios, with violations, faults,
// observations, probes, crashes, renewals and reentrancy) and, for each
// history TestCheckGolden checks, NAME.golden.json: what the checker and
// the judgement made of it.
const checkGoldenDir = "testdata/check-golden"

// goldenHistory is one history TestCheckGolden checks.
type goldenHistory struct {
	name string
	load func() (history.Header, []history.Operation, error)
}

// goldenHistories lists the histories: those of checkGoldenDir, the
// checker's and results' test histories, and seeded synthetic ones (with
// planted overlaps and lost updates, blocking acquires, many keys).
func goldenHistories(t *testing.T) []goldenHistory {
	var hs []goldenHistory
	gz, err := filepath.Glob(filepath.Join(checkGoldenDir, "*.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range gz {
		hs = append(hs, goldenHistory{strings.TrimSuffix(filepath.Base(p), ".jsonl.gz"), func() (history.Header, []history.Operation, error) {
			f, err := os.Open(p)
			if err != nil {
				return history.Header{}, nil, err
			}
			defer f.Close()
			zr, err := gzip.NewReader(f)
			if err != nil {
				return history.Header{}, nil, err
			}
			return history.Parse(zr)
		}})
	}
	plain, err := filepath.Glob("../checker/testdata/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	plain = append(plain, "../figures/testdata/baseline-run/histories/token-lua-baseline-1.jsonl")
	for _, p := range plain {
		hs = append(hs, goldenHistory{"testdata-" + strings.TrimSuffix(filepath.Base(p), ".jsonl"), func() (history.Header, []history.Operation, error) {
			return history.Load(p)
		}})
	}
	for _, s := range []synth.Spec{
		{Ops: 20_000, Keys: 1, Clients: 16, Plants: 10, Seed: 7},
		{Ops: 20_000, Keys: 16, Clients: 256, Plants: 10, Seed: 8},
		{Ops: 20_000, Keys: 100, Clients: 16, Seed: 9},
		{Ops: 5_000, Keys: 1, Clients: 64, Plants: 4, Seed: 10, Blocking: true},
	} {
		name := fmt.Sprintf("synth-ops%d-keys%d-clients%d-plants%d-seed%d", s.Ops, s.Keys, s.Clients, s.Plants, s.Seed)
		if s.Blocking {
			name += "-blocking"
		}
		hs = append(hs, goldenHistory{name, func() (history.Header, []history.Operation, error) {
			// Through a file: the loader is part of what is pinned.
			path := filepath.Join(t.TempDir(), name+".jsonl")
			h, ops, _ := synth.Generate(s)
			if err := synth.Write(path, h, ops); err != nil {
				return h, nil, err
			}
			return history.Load(path)
		}})
	}
	return hs
}

// expectationFields are the results.Run fields that come from the verdict
// table (rows and claims, which other work changes on purpose), not from
// the history: left out of the golden files.
var expectationFields = []string{"expected", "expected_checks", "reason", "as_expected", "unexpected", "inconclusive", "missing_evidence", "liveness_finding"}

// goldenOf is what TestCheckGolden pins for one history: the checker's
// report (every check's status, violations, message, details and
// witnesses; the liveness figures; the evidence) and the judged run
// without its expectation fields (verdicts, counts, latencies, windows,
// faults, witnesses), as indented JSON.
func goldenOf(t *testing.T, name string, h history.Header, ops []history.Operation) []byte {
	// A generous time limit: the histories are small, and a check that
	// ran out of time on a busy machine would differ for the wrong reason.
	run, rep, _, err := CheckHistory(name+".jsonl", h, ops, checker.Options{Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range expectationFields {
		delete(m, f)
	}
	out, err := json.MarshalIndent(struct {
		Operations int
		Report     checker.Report
		Run        map[string]any
	}{len(ops), rep, m}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestCheckGolden pins what `lockbench check` finds in saved histories:
// every check's verdict, message and witnesses, and the judged run's
// figures, byte for byte (testdata/check-golden/NAME.golden.json), so
// that work on the checker's speed (docs/performance.md) cannot change a
// result unseen. A check changed on purpose rewrites the files:
//
//	go test ./validate -run TestCheckGolden -update-check-golden
//
// and the diff of the golden files shows the change to review.
func TestCheckGolden(t *testing.T) {
	for _, g := range goldenHistories(t) {
		t.Run(g.name, func(t *testing.T) {
			h, ops, err := g.load()
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			got := goldenOf(t, g.name, h, ops)
			path := filepath.Join(checkGoldenDir, g.name+".golden.json")
			if *updateCheckGolden {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (a new history? go test ./validate -run TestCheckGolden -update-check-golden writes its golden file)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what the checker finds now: %s\n(a check changed on purpose: go test ./validate -run TestCheckGolden -update-check-golden, and review the diff)", path, firstDiff(got, want))
			}
		})
	}
}

// firstDiff names the first line where got and want differ.
func firstDiff(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		g, w := "", ""
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, g, w)
		}
	}
	return "same lines"
}
