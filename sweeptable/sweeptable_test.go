package sweeptable

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/results"
)

// TestVerdictsSweepDocFormat keeps the verdicts-sweep table of
// docs/verdicts.md in its documented format (markers, header, rows of
// the verdict table, cells "TTL: held k/n, broke k/n (excl k); notes"),
// not its measured content, which only make verdicts-sweep rewrites.
func TestVerdictsSweepDocFormat(t *testing.T) {
	doc, err := os.ReadFile("../docs/verdicts.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range Check(string(doc)) {
		t.Error(err)
	}
}

// TestVerdictsSweepTable renders a table from runs at three scales and
// checks its format, the cells and the change column.
func TestVerdictsSweepTable(t *testing.T) {
	p := bench.VerdictsSweepProfile()
	run := func(strategy, scenario string, ttl time.Duration, seed int64, ex, res checker.Status) results.Run {
		return results.Run{Strategy: strategy, Scenario: scenario, Seed: seed,
			Config:  results.RunConfig{TTLMs: float64(ttl) / float64(time.Millisecond)},
			Command: "lockbench run --strategy " + strategy + " --scenario " + scenario + " --ttl " + ttl.String(),
			Verdict: results.Verdict{Exclusion: ex, Resource: res, Liveness: checker.OK}}
	}
	ok, bad, inc := checker.OK, checker.Violated, checker.Inconclusive
	f := &results.File{Profile: "verdicts-sweep", Commit: "abc", Started: "2026-12-04T10:00:00Z", Runs: []results.Run{
		run("zk-lock", "leader-pause", time.Second, 1, ok, ok),
		run("zk-lock", "leader-pause", time.Second, 2, ok, ok),
		run("zk-lock", "leader-pause", 5*time.Second, 1, bad, bad),
		run("token-lua", "baseline", time.Second, 1, bad, ok), // contradicts the must-hold row
		run("zk-lock", "leader-pause", 5*time.Second, 2, bad, ok),
		run("zk-lock", "leader-pause", 15*time.Second, 1, inc, inc),
		run("token-lua", "baseline", 100*time.Millisecond, 1, ok, ok),
		// a scenario that fixes its own TTL: asked 5 s, ran at 200 ms
		{Strategy: "token-lua", Scenario: "node-restart", Seed: 1, Config: results.RunConfig{TTLMs: 200},
			Command: "lockbench run --strategy token-lua --scenario node-restart --ttl 5s",
			Verdict: results.Verdict{Exclusion: bad, Resource: bad, Liveness: ok}},
	}}
	table, err := Table(p, []*results.File{f}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range Check(table) {
		t.Error(err)
	}
	for _, want := range []string{
		"| leader-pause | zk-lock |",
		"1s: held 2/2; seeds 1-2",
		"5s: broke 2/2 (excl 2, res 1); seeds 1-2",
		"1s: broke 1/1 (excl 1); 1 unexpected; seeds 1",
		"15s: inconclusive 1/1; seeds 1",
		"excl broke at 5s, held at 1s; res broke at 5s, held at 1s",
		"| baseline | token-lua | must-hold | 100ms: held 1/1; seeds 1 | 1s: broke 1/1 (excl 1); 1 unexpected; seeds 1 | — | excl broke at 1s, held at 100ms |",
		"5s: broke 1/1 (excl 1, res 1); ran at 200ms; seeds 1",
		// every row no run measured is named after the table
		"\n\nNot measured in these passes (",
		"; node-pause (naive, set-nx-px, token-lua,",
		"; leader-kill (etcd-mutex, etcd-fenced, zk-lock, zk-fenced);",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	doc := Doc("# Verdicts\n\ntext\n\n"+Begin+"\nOLDTABLE\n"+End+"\nafter\n", table)
	if strings.Contains(doc, "OLDTABLE") || !strings.HasSuffix(doc, "after\n") || strings.Count(doc, Begin) != 1 {
		t.Errorf("Doc did not replace the table in place:\n%s", doc)
	}
	if _, err := Table(p, nil, nil, ""); err == nil {
		t.Error("no runs: no error")
	}

	// Kept rows: a rewrite from new results keeps the earlier line of a
	// row they do not measure, and replaces the line of one they do.
	kept, from := Rows(doc)
	if from != "Measured 2026-12-04 (commit abc, 0 cores)" || len(kept) != 3 {
		t.Fatalf("Rows: %d rows from %q, want 3 from the Measured sentence", len(kept), from)
	}
	g := &results.File{Profile: "verdicts-sweep", Commit: "def", Started: "2026-12-05T10:00:00Z", Runs: []results.Run{
		run("token-lua", "baseline", 100*time.Millisecond, 2, ok, ok),
	}}
	merged, err := Table(p, []*results.File{g}, kept, from)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range Check(merged) {
		t.Error(err)
	}
	for _, want := range []string{
		"2 rows no results file given here measured are kept from the earlier table (Measured 2026-12-04 (commit abc, 0 cores)).",
		"| baseline | token-lua | must-hold | 100ms: held 1/1; seeds 2 | — | — | no |",
		"5s: broke 2/2 (excl 2, res 1); seeds 1-2",             // zk-lock × leader-pause, kept
		"5s: broke 1/1 (excl 1, res 1); ran at 200ms; seeds 1", // token-lua × node-restart, kept
	} {
		if !strings.Contains(merged, want) {
			t.Errorf("merged table lacks %q:\n%s", want, merged)
		}
	}
	if strings.Contains(merged, "node-restart (") && strings.Contains(merged, "node-restart (naive, set-nx-px, token-lua") {
		t.Errorf("a kept row is listed as not measured:\n%s", merged)
	}
}
