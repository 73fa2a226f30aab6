package bench

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
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
	for _, err := range CheckVerdictsSweepDoc(string(doc)) {
		t.Error(err)
	}
}

// TestScaleCells: a profile with Scales runs every cell at each scale
// with the scale's seeds, locks on etcd and ZooKeeper at their own
// scales, each run with a history of its own, and --repeat overrides the
// seeds.
func TestScaleCells(t *testing.T) {
	p := VerdictsSweepProfile()
	p.Strategies, p.Scenarios = []string{"token-lua", "zk-lock"}, []string{"baseline"}
	specs, err := scaleCells(p, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	histories := map[string]bool{}
	for _, s := range specs {
		count[s.Strategy+" "+s.Workload.TTL.String()+" "+s.Workload.Duration.String()]++
		h := taggedHistoryName(s.Strategy, s.Scenario, s.Seed, s.HistoryTag)
		if histories[h] {
			t.Errorf("two runs write history %s: a scale overwrites another's", h)
		}
		histories[h] = true
	}
	want := map[string]int{
		"token-lua 100ms 2s": 1, "token-lua 1s 6s": 1, "token-lua 5s 15s": 1,
		"zk-lock 1s 8s": 1, "zk-lock 5s 20s": 1, "zk-lock 15s 45s": 1,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d runs, want %d (plan: %v)", k, count[k], n, count)
		}
	}
	if specs, _ = scaleCells(p, 1, 2); len(specs) != 12 {
		t.Errorf("--repeat 2: %d runs, want 12 (two per strategy and scale)", len(specs))
	}
}

// TestVerdictsSweepTable renders a table from runs at three scales and
// checks its format, the cells and the change column.
func TestVerdictsSweepTable(t *testing.T) {
	p := VerdictsSweepProfile()
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
	table, err := VerdictsSweepTable(p, []*results.File{f}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range CheckVerdictsSweepDoc(table) {
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
	doc := VerdictsSweepDoc("# Verdicts\n\ntext\n\n"+SweepBegin+"\nOLDTABLE\n"+SweepEnd+"\nafter\n", table)
	if strings.Contains(doc, "OLDTABLE") || !strings.HasSuffix(doc, "after\n") || strings.Count(doc, SweepBegin) != 1 {
		t.Errorf("VerdictsSweepDoc did not replace the table in place:\n%s", doc)
	}
	if _, err := VerdictsSweepTable(p, nil, nil, ""); err == nil {
		t.Error("no runs: no error")
	}

	// Kept rows: a rewrite from new results keeps the earlier line of a
	// row they do not measure, and replaces the line of one they do.
	kept, from := SweepRows(doc)
	if from != "Measured 2026-12-04 (commit abc, 0 cores)" || len(kept) != 3 {
		t.Fatalf("SweepRows: %d rows from %q, want 3 from the Measured sentence", len(kept), from)
	}
	g := &results.File{Profile: "verdicts-sweep", Commit: "def", Started: "2026-12-05T10:00:00Z", Runs: []results.Run{
		run("token-lua", "baseline", 100*time.Millisecond, 2, ok, ok),
	}}
	merged, err := VerdictsSweepTable(p, []*results.File{g}, kept, from)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range CheckVerdictsSweepDoc(merged) {
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

// TestNodePauseBudgetScales: node-pause's lock calls wait 3×TTL (the
// pause, 2×TTL from TTL/10 after the grant, must not outlast an acquire
// queued in it), never less than the Redis default, unless --op-timeout
// says otherwise; other scenarios keep the default.
func TestNodePauseBudgetScales(t *testing.T) {
	for _, c := range []struct {
		scenario string
		ttl, op  time.Duration
		want     time.Duration
	}{
		{"node-pause", 100 * time.Millisecond, 0, 500 * time.Millisecond},
		{"node-pause", time.Second, 0, 3 * time.Second},
		{"node-pause", 5 * time.Second, 0, 15 * time.Second},
		{"node-pause", 5 * time.Second, 200 * time.Millisecond, 200 * time.Millisecond},
		{"baseline", 5 * time.Second, 0, 500 * time.Millisecond},
	} {
		s := Spec{Strategy: "set-nx-px", Scenario: c.scenario, Seed: 1,
			Workload: workload.Config{Clients: 4, Keys: 1, TTL: c.ttl, Duration: time.Second, OpTimeout: c.op}}
		_, _, _, w, err := s.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		if w.OpTimeout != c.want {
			t.Errorf("%s at TTL %v, --op-timeout %v: op timeout %v, want %v", c.scenario, c.ttl, c.op, w.OpTimeout, c.want)
		}
		adj, _ := s.Adjustments()
		listed := false
		for _, a := range adj {
			listed = listed || a.Flag == "--op-timeout"
		}
		if want := c.op == 0 && c.want != 500*time.Millisecond; listed != want {
			t.Errorf("%s at TTL %v, --op-timeout %v: adjustment listed %v, want %v (%v)", c.scenario, c.ttl, c.op, listed, want, adj)
		}
	}
}
