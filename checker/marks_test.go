package checker_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// case_ is one history for TestEveryMarkIsAWitness.
type case_ struct {
	name string
	h    history.Header
	ops  []history.Operation
}

// markKey identifies a mark by what the test compares: kind, key, interval
// (ms, exact) and rows.
type markKey struct {
	kind       plots.MarkKind
	key        string
	start, end float64
	clients    string
}

func keyOf(kind plots.MarkKind, key string, start, end float64, clients []int) markKey {
	c := slices.Clone(clients)
	sort.Ints(c)
	return markKey{kind, key, start, end, fmt.Sprint(c)}
}

// wantMarks are the marks the stored witnesses call for, per key: every
// exclusion witness over its interval both held on both holders' rows,
// every resource witness over its from..to on the writer's row.
func wantMarks(w witness.Witnesses) map[string][]markKey {
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	out := map[string][]markKey{}
	for _, o := range w.Exclusion {
		clients := []int{o.A.Client, o.B.Client}
		if o.A.Client == o.B.Client {
			clients = clients[:1]
		}
		out[o.Key] = append(out[o.Key], keyOf(plots.MarkBothHeld, o.Key, ms(o.BothFromNs), ms(o.BothToNs), clients))
	}
	kinds := map[witness.ResourceWitnessKind]plots.MarkKind{witness.LostUpdate: plots.MarkLostUpdate, witness.StaleWrite: plots.MarkStaleWrite, witness.NotLinearizable: plots.MarkNotLinearizable}
	for _, r := range w.Resource {
		var clients []int
		if r.Write != nil {
			clients = []int{r.Write.Client}
		}
		out[r.Key] = append(out[r.Key], keyOf(kinds[r.Kind], r.Key, ms(r.FromNs), ms(r.ToNs), clients))
	}
	return out
}

// legendCounts reads "LABEL: N" legend lines from a timeline's SVG texts.
func legendCounts(t *testing.T, svg string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, label := range []string{"both held (exclusion witness)", "lost update: the write", "stale write accepted", "resource not linearizable"} {
		i := strings.Index(string(data), label+": ")
		if i < 0 {
			continue
		}
		var n int
		fmt.Sscanf(string(data[i+len(label)+2:]), "%d", &n)
		out[label] = n
	}
	return out
}

// cases are the recorded histories in testdata and random ones: the
// exclusion generator's (times scaled to ms, with random fault windows),
// the resource generator's (fencing off, writes, all) and the benchmarks'
// generator with planted violations on one to three keys.
func cases(t *testing.T) []case_ {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories (%v)", err)
	}
	var cs []case_
	for _, f := range files {
		h, ops, err := history.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, case_{filepath.Base(f), h, ops})
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 30 {
		ops := checker.RandomHistory(rng)
		var end int64
		for j := range ops {
			ops[j].Invoke *= 1_000_000 // one unit = 1 ms
			ops[j].Complete *= 1_000_000
			end = max(end, ops[j].Complete)
		}
		for range rng.IntN(6) {
			s := rng.Int64N(end + 1)
			ops = append(ops, history.Operation{Client: -1, Stream: -1, Kind: history.Nemesis, Invoke: s, Complete: s + rng.Int64N(3_000_000), Result: history.OK, Note: "random"})
		}
		cs = append(cs, case_{fmt.Sprintf("random-%d", i), history.Header{Strategy: "random", Scenario: "random", TTLMs: 2, Fencing: "off"}, ops})
	}
	for i := range 15 {
		mode := []string{"off", "writes", "all"}[i%3]
		ops := checker.RandomResourceHistory(rng, mode)
		for j := range ops {
			ops[j].Invoke *= 1_000_000
			ops[j].Complete *= 1_000_000
		}
		cs = append(cs, case_{fmt.Sprintf("resource-%s-%d", mode, i), history.Header{Strategy: "random", Scenario: "resource", TTLMs: 2, Fencing: mode}, ops})
	}
	for i := range 3 {
		h, ops, _ := checker.SynthHistory(3000, 1+i, 16, 2+i, uint64(20+i))
		cs = append(cs, case_{fmt.Sprintf("synth-%d", i), h, ops})
	}
	return cs
}

// TestEveryMarkIsAWitness checks the one source of truth for violations:
// for each history it runs the checks, stores the witnesses in a
// results.json run (written and read back), draws the run's timelines as
// the report does (plots.TimelineKeys, plots.RunTimeline), and asserts that
// the marks drawn are exactly the stored exclusion and resource witnesses,
// each over its interval, none cut, none twice; that each legend counts the
// witnesses of its key; and that porcupine's annotations name the same
// exclusion intervals.
func TestEveryMarkIsAWitness(t *testing.T) {
	dir := t.TempDir()
	var withMarks int
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			rep := checker.Check(c.h, c.ops, checker.Options{})
			run := results.Run{Strategy: c.h.Strategy, Scenario: c.h.Scenario, Seed: c.h.Seed,
				Config: results.RunConfig{TTLMs: float64(c.h.TTLMs)}, Witnesses: rep.Witnesses()}
			for _, op := range c.ops {
				if op.Kind == history.Nemesis {
					run.Faults = append(run.Faults, results.Fault{Name: op.Note, StartMs: float64(op.Invoke) / 1e6, EndMs: float64(op.Complete) / 1e6})
				}
			}
			// Through results.json and back: the plots read stored witnesses.
			rd := filepath.Join(dir, c.name)
			if err := figures.Write(rd, &results.File{Tool: "lockbench test", Runs: []results.Run{run}}); err != nil {
				t.Fatal(err)
			}
			f, err := results.Load(filepath.Join(rd, results.FileName))
			if err != nil {
				t.Fatal(err)
			}
			stored := f.Runs[0]
			if a, b := mustJSON(t, stored.Witnesses), mustJSON(t, rep.Witnesses()); a != b {
				t.Fatalf("witnesses changed through results.json:\n%s\n%s", a, b)
			}

			want := wantMarks(stored.Witnesses)
			keys := plots.TimelineKeys(c.ops, stored.Witnesses)
			for k := range want {
				if !slices.Contains(keys, k) {
					t.Errorf("key %s has witnesses but no timeline (keys %v)", k, keys)
				}
			}
			for _, key := range keys {
				prefix := filepath.Join(rd, "timeline-"+strings.ReplaceAll(key, ":", "_"))
				drawn, err := plots.RunTimeline(c.ops, stored, key, prefix)
				if errors.Is(err, plots.ErrNoData) && len(want[key]) == 0 {
					continue
				}
				if err != nil {
					t.Fatalf("timeline of %s: %v", key, err)
				}
				var got []markKey
				for _, m := range drawn {
					got = append(got, keyOf(m.Kind, key, m.StartMs, m.EndMs, m.Clients))
				}
				sortMarks(got)
				w := slices.Clone(want[key])
				sortMarks(w)
				if fmt.Sprint(got) != fmt.Sprint(w) {
					t.Errorf("key %s: marks drawn\n  %v\nwitnesses\n  %v", key, got, w)
				}
				counts := legendCounts(t, prefix+".svg")
				n := map[string]int{}
				for _, m := range w {
					n[map[plots.MarkKind]string{plots.MarkBothHeld: "both held (exclusion witness)", plots.MarkLostUpdate: "lost update: the write",
						plots.MarkStaleWrite: "stale write accepted", plots.MarkNotLinearizable: "resource not linearizable"}[m.kind]]++
				}
				if fmt.Sprint(counts) != fmt.Sprint(n) {
					t.Errorf("key %s: legend counts %v, witnesses %v", key, counts, n)
				}
				if len(w) > 0 {
					withMarks++
				}
			}
		})
	}
	if withMarks < 30 {
		t.Errorf("only %d timelines had marks: the test means little", withMarks)
	}
}

func sortMarks(ms []markKey) {
	sort.Slice(ms, func(i, j int) bool { return fmt.Sprint(ms[i]) < fmt.Sprint(ms[j]) })
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
