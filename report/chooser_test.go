package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/internal/resultstest"
	"github.com/lockbench/lockbench/results"
)

// chooserRun is a completed run with every check held, 100 ms TTL and
// the verdict table expecting exclusion to hold; mods change it.
func chooserRun(mods ...func(*results.Run)) results.Run {
	r := results.Run{
		Expected: "must-hold", ExpectedChecks: map[string]string{"exclusion": "hold", "resource": "hold"},
		Verdict: results.Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok"},
		Config:  results.RunConfig{TTLMs: 100, Fencing: "writes"},
		Checks:  map[string]string{},
	}
	for _, m := range mods {
		m(&r)
	}
	return r
}

// Data that triggers the chooser's phrases.
var (
	exclusionBroken = func(r *results.Run) { r.Verdict.Exclusion = "violated" }
	lostUpdate      = func(r *results.Run) { r.Verdict.Exclusion, r.Verdict.Resource = "violated", "violated" }
	deadlock        = func(r *results.Run) { r.Verdict.Liveness = "violated" }
	rejected        = func(n int) func(*results.Run) { return func(r *results.Run) { r.Evidence.ResourceRejected = n } }
	fenceNotUp      = func(r *results.Run) { r.Verdict.Fencing = "violated" }
	atRisk          = func(r *results.Run) { r.Expected = "at-risk"; r.ExpectedChecks["exclusion"] = "at-risk" }
	kind            = func(k string) func(*results.Run) { return func(r *results.Run) { r.ScenarioKind = k } }
	faultNoGrants   = func(ms float64) func(*results.Run) {
		return func(r *results.Run) {
			r.Faults = []results.Fault{{Name: "pause", StartMs: 100, EndMs: 100 + ms}}
			r.Liveness.GrantsDuringFaults = 0
		}
	}
	// lacking marks checks inconclusive with what the evidence rules say
	// they lacked (Run.Missing).
	lacking = func(m results.MissingEvidence, checks ...string) func(*results.Run) {
		return func(r *results.Run) {
			if r.Missing == nil {
				r.Missing = map[string]results.MissingEvidence{}
			}
			for _, c := range checks {
				r.Missing[c] = m
				switch c {
				case "exclusion":
					r.Verdict.Exclusion = "inconclusive"
				case "resource":
					r.Verdict.Resource = "inconclusive"
				case "fencing":
					r.Verdict.Fencing = "inconclusive"
				}
			}
		}
	}
	fewHolds = results.MissingEvidence{What: "2 holds, 0 chances to overlap (need ≥ 10)", Fix: "run longer (--duration) or with more clients (--clients)"}
	starved  = func(r *results.Run) {
		r.LivenessFinding = "granted 0 times to 256 clients in 188 acquires: 188 acquires timed out (100%)"
	}
	noHolds = func(r *results.Run) {
		r.Verdict.Exclusion, r.Verdict.Resource = "skipped", "skipped"
		r.Checks["exclusion"] = "no successful acquires: no holds to check"
		r.Checks["resource"] = "no resource operations"
	}
)

// TestChooserPhrases: each phrase of the chooser table with the data that
// triggers it, and its class.
func TestChooserPhrases(t *testing.T) {
	tests := []struct {
		name      string
		runs      []results.Run
		text, cls string
	}{
		{"every check held", []results.Run{chooserRun()}, "safe", cellSafe},
		{"fencing rejected stale writes: resource safe", []results.Run{chooserRun(exclusionBroken, rejected(3))},
			"resource safe: exclusion broken; fencing rejected 3 stale writes, no update lost", cellFenced},
		{"fencing on every operation", []results.Run{chooserRun(exclusionBroken, rejected(1), func(r *results.Run) { r.Config.Fencing = "all" })},
			"resource safe: exclusion broken; fencing rejected 1 stale operation, no update lost", cellFenced},
		// redislock × node-restart: nothing rejected, so fencing gets no credit.
		{"exclusion broken, nothing rejected", []results.Run{chooserRun(exclusionBroken)},
			"broken: exclusion broken; no update lost in this run", cellBroken},
		{"lost updates", []results.Run{chooserRun(lostUpdate)}, "broken: lost updates", cellBroken},
		{"lost updates although fencing rejected some", []results.Run{chooserRun(lostUpdate, rejected(2))}, "broken: lost updates", cellBroken},
		{"deadlock", []results.Run{chooserRun(deadlock)}, "broken: deadlock", cellBroken},
		{"reentrancy count wrong", []results.Run{chooserRun(func(r *results.Run) { r.Verdict.Reentrancy = "violated" })}, "broken: reentrancy count wrong", cellBroken},
		{"fencing counter lost, resource safe by fencing", []results.Run{chooserRun(exclusionBroken, fenceNotUp, rejected(34))},
			"broken: fencing tokens not increasing; fencing rejected 34 stale writes, no update lost", cellBroken},
		{"fencing counter lost and lost updates", []results.Run{chooserRun(lostUpdate, fenceNotUp)},
			"broken: lost updates, fencing tokens not increasing", cellBroken},
		{"exclusion broken, resource not checked", []results.Run{chooserRun(exclusionBroken, func(r *results.Run) { r.Verdict.Resource = "skipped" })},
			"broken: exclusion broken; resource not checked", cellBroken},
		{"inconclusive, with what the check lacked", []results.Run{chooserRun(func(r *results.Run) {
			r.Verdict.Exclusion = "inconclusive"
			r.Checks["exclusion"] = "porcupine timed out after 10s"
		})}, "inconclusive: exclusion: porcupine timed out after 10s", cellInconclusive},
		{"no holds: nothing to check", []results.Run{chooserRun(noHolds)},
			"inconclusive: exclusion: no successful acquires: no holds to check; resource: no resource operations", cellInconclusive},
		{"inconclusive without a message", []results.Run{chooserRun(func(r *results.Run) { r.Verdict.Exclusion = "inconclusive" })},
			"inconclusive: exclusion: could not decide", cellInconclusive},
		// The evidence rules' words (Run.Missing), one case per rule.
		{"inconclusive: too few holds", []results.Run{chooserRun(lacking(fewHolds, "exclusion", "resource"))},
			"inconclusive: exclusion, resource: 2 holds, 0 chances to overlap (need ≥ 10)", cellInconclusive},
		{"inconclusive: holds without contention", []results.Run{chooserRun(lacking(results.MissingEvidence{What: "100 holds, 4 chances to overlap (need ≥ 10)"}, "exclusion", "resource"))},
			"inconclusive: exclusion, resource: 100 holds, 4 chances to overlap (need ≥ 10)", cellInconclusive},
		{"inconclusive: most outcomes unknown", []results.Run{chooserRun(lacking(results.MissingEvidence{What: "714 of 719 acquires unknown (99%; at most 50%)"}, "exclusion", "resource"))},
			"inconclusive: exclusion, resource: 714 of 719 acquires unknown (99%; at most 50%)", cellInconclusive},
		{"inconclusive: a canary's faults all missed", []results.Run{chooserRun(lacking(results.MissingEvidence{What: "no fault landed (3 injected, 3 missed)"}, "exclusion", "resource"))},
			"inconclusive: exclusion, resource: no fault landed (3 injected, 3 missed)", cellInconclusive},
		{"inconclusive: no fault injected", []results.Run{chooserRun(lacking(results.MissingEvidence{What: "no fault injected"}, "exclusion", "resource"))},
			"inconclusive: exclusion, resource: no fault injected", cellInconclusive},
		{"inconclusive: porcupine ran out of time", []results.Run{chooserRun(lacking(results.MissingEvidence{What: "porcupine timed out after 10s on 5000 holds; the sweep-line found no overlap"}, "exclusion"))},
			"inconclusive: exclusion: porcupine timed out after 10s on 5000 holds; the sweep-line found no overlap", cellInconclusive},
		{"inconclusive: checks lacking different evidence", []results.Run{chooserRun(lacking(fewHolds, "exclusion", "resource"), lacking(results.MissingEvidence{What: "2 holds (need ≥ 10)"}, "fencing"))},
			"inconclusive: exclusion, resource: 2 holds, 0 chances to overlap (need ≥ 10); fencing: 2 holds (need ≥ 10)", cellInconclusive},
		{"inconclusive and granted almost nothing", []results.Run{chooserRun(lacking(fewHolds, "exclusion", "resource"), starved)},
			"inconclusive: exclusion, resource: 2 holds, 0 chances to overlap (need ≥ 10); granted almost nothing", cellInconclusive},
		{"safe on its evidence, yet granted almost nothing", []results.Run{chooserRun(starved)}, "safe: granted almost nothing", cellSafe},
		{"broken although it granted almost nothing", []results.Run{chooserRun(lostUpdate, starved)}, "broken: lost updates", cellBroken},
		{"inconclusive in one seed of two", []results.Run{chooserRun(), chooserRun(lacking(fewHolds, "exclusion", "resource"))},
			"inconclusive: exclusion, resource: 2 holds, 0 chances to overlap (need ≥ 10) (1 of 2 seeds)", cellInconclusive},
		// A server fault that granted nobody is a drawback; the holder's own
		// long critical section or pause is not (watchdog, redislock × long-cs).
		{"server fault of a TTL without grants", []results.Run{chooserRun(kind("process"), faultNoGrants(200))}, "safe: no grants during the fault", cellSafe},
		{"client fault of a TTL without grants", []results.Run{chooserRun(kind("client"), faultNoGrants(200))}, "safe", cellSafe},
		{"fault kind unknown (older file)", []results.Run{chooserRun(faultNoGrants(200))}, "safe", cellSafe},
		{"short server fault without grants", []results.Run{chooserRun(kind("network"), faultNoGrants(20))}, "safe", cellSafe},
		{"server fault with grants", []results.Run{chooserRun(kind("clock"), func(r *results.Run) {
			r.Faults = []results.Fault{{Name: "jump", StartMs: 0, EndMs: 300}}
			r.Liveness.GrantsDuringFaults = 4
		})}, "safe", cellSafe},
		{"at risk, broke", []results.Run{chooserRun(atRisk, lostUpdate)}, "at risk: broke in 1 of 1 seeds: lost updates", cellAtRisk},
		{"at risk, held", []results.Run{chooserRun(atRisk)}, "at risk: broke in 0 of 1 seeds", cellAtRisk},
		{"at risk, fenced", []results.Run{chooserRun(atRisk, exclusionBroken, rejected(2))},
			"at risk: broke in 0 of 1 seeds; fencing kept the resource safe in 1", cellAtRisk},
		{"at risk, inconclusive", []results.Run{chooserRun(atRisk, noHolds)},
			"at risk: broke in 0 of 1 seeds; inconclusive in 1 (exclusion: no successful acquires: no holds to check; resource: no resource operations)", cellAtRisk},
		{"at risk over seeds", []results.Run{chooserRun(atRisk), chooserRun(atRisk, lostUpdate), chooserRun(atRisk, deadlock)},
			"at risk: broke in 2 of 3 seeds: lost updates, deadlock", cellAtRisk},
		{"worst of seeds", []results.Run{chooserRun(), chooserRun(lostUpdate), chooserRun()}, "broken: lost updates (1 of 3 seeds)", cellBroken},
		{"every seed broken", []results.Run{chooserRun(lostUpdate), chooserRun(lostUpdate)}, "broken: lost updates", cellBroken},
		{"a seed failed", []results.Run{chooserRun(), chooserRun(func(r *results.Run) { r.Error = "port in use" })}, "safe (1 of 2 seeds failed to run)", cellSafe},
		{"no seed ran", []results.Run{chooserRun(func(r *results.Run) { r.Error = "port in use" })}, "did not run (error)", cellFailed},
		{"not checked", []results.Run{chooserRun(func(r *results.Run) {
			r.Verdict = results.Verdict{Exclusion: "skipped", Resource: "skipped", Liveness: "skipped"}
		})},
			"not checked: no checker ran: says nothing about safety", cellUnchecked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := pairCell(tt.runs)
			if c.Text != tt.text || c.Class != tt.cls {
				t.Errorf("pairCell = %q (%s), want %q (%s)", c.Text, c.Class, tt.text, tt.cls)
			}
			if ObservedSafety(tt.runs) != c.Text {
				t.Errorf("ObservedSafety = %q, want the cell's text", ObservedSafety(tt.runs))
			}
		})
	}
}

// TestChooserStable: two results files that differ only in the
// observation of an at-risk pair (one bench saw a lost update, the other
// nothing, a third could not decide) give identical chooser classes; the
// detail says what each saw.
func TestChooserStable(t *testing.T) {
	file := func(mod func(*results.Run)) *results.File {
		f := resultstest.SampleFile()
		f.Runs = append(f.Runs, chooserRun(atRisk, func(r *results.Run) { r.Strategy, r.Scenario, r.Seed = "token-lua", "clock-jump", 1 }, mod))
		return f
	}
	files := []*results.File{
		file(func(*results.Run) {}),
		file(lostUpdate),
		file(func(r *results.Run) {
			r.Verdict.Exclusion = "violated"
			r.Evidence = measure.Evidence{ResourceRejected: 2}
		}),
		file(noHolds),
	}
	classes := func(f *results.File) string {
		var b strings.Builder
		for _, row := range buildView(f, nil).Chooser {
			b.WriteString(row.Strategy + ":")
			for _, c := range row.Cells {
				b.WriteString(" " + c.Class)
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	want := classes(files[0])
	if !strings.Contains(want, "token-lua: safe broken at-risk") {
		t.Fatalf("chooser classes %q: want token-lua's clock-jump cell at risk", want)
	}
	for i, f := range files[1:] {
		if got := classes(f); got != want {
			t.Errorf("file %d: chooser classes\n%s\nwant those of the file that saw nothing:\n%s", i+2, got, want)
		}
	}
	details := map[string]bool{}
	for _, f := range files {
		for _, row := range buildView(f, nil).Chooser {
			if row.Strategy == "token-lua" {
				details[row.Cells[2].Text] = true
			}
		}
	}
	if len(details) != len(files) {
		t.Errorf("the at-risk cell's details %v: want one per observation", details)
	}
}

// TestRecommendations: each need's line follows from the cells of its
// scenario: the strategies that kept exclusion (named by a claim only
// they share), fencing alone, none, and those at risk or inconclusive.
func TestRecommendations(t *testing.T) {
	cell := func(class string) chooserCell { return chooserCell{Ran: true, Class: class} }
	rows := []chooserRow{
		{Strategy: "token-lua", Cells: []chooserCell{cell(cellSafe), cell(cellBroken), cell(cellBroken), cell(cellBroken), cell(cellAtRisk), {}}},
		{Strategy: "redlock", Cells: []chooserCell{cell(cellSafe), cell(cellSafe), cell(cellBroken), cell(cellBroken), cell(cellInconclusive), {}}},
		{Strategy: "redsync", Cells: []chooserCell{cell(cellSafe), cell(cellSafe), cell(cellBroken), cell(cellBroken), cell(cellSafe), {}}},
		{Strategy: "fenced", Cells: []chooserCell{cell(cellSafe), cell(cellBroken), cell(cellFenced), cell(cellBroken), cell(cellFenced), {}}},
	}
	infos := []results.StrategyInfo{
		{Name: "token-lua", Claims: []string{"atomic-acquire", "token-release"}},
		{Name: "redlock", Claims: []string{"atomic-acquire", "token-release", "quorum", "validity"}},
		{Name: "redsync", Claims: []string{"atomic-acquire", "token-release", "quorum", "validity"}},
		{Name: "fenced", Claims: []string{"atomic-acquire", "token-release", "fencing"}},
	}
	got := recommend(rows, []string{"baseline", "failover-lost-write", "gc-pause", "redlock-clock-jump", "new-fault", "not-run"}, infos)
	want := []string{
		"need exclusion with no faults (baseline): any strategy tested (4 of 4)",
		"need exclusion across a primary failover (failover-lost-write): a quorum lock (redlock, redsync)",
		"need exclusion when the holder pauses (GC, VM stall) past the TTL (gc-pause): no strategy keeps exclusion; only fencing protects the resource: fenced",
		"need exclusion when one quorum node's clock jumps (redlock-clock-jump): no strategy tested satisfies it",
		"need exclusion under new-fault (new-fault): a quorum lock (redsync); fencing also protects the resource: fenced; at risk (depends on timing): token-lua; inconclusive: redlock",
	}
	if len(got) != len(want) {
		t.Fatalf("%d recommendations, want %d (a scenario nobody ran has none): %+v", len(got), len(want), got)
	}
	for i, r := range got {
		if line := r.Need + " (" + r.Scenario + "): " + r.Text; line != want[i] {
			t.Errorf("recommendation %d:\n got %s\nwant %s", i, line, want[i])
		}
	}
	// An inconclusive strategy with the claim does not keep it from being named.
	rows[1].Cells[1] = cell(cellInconclusive)
	if r := recommend(rows, []string{"baseline", "failover-lost-write"}, infos)[1]; r.Text != "a quorum lock (redsync); inconclusive: redlock" {
		t.Errorf("redlock inconclusive under failover: %q, want a quorum lock (redsync); inconclusive: redlock", r.Text)
	}
	// A claim is named only when no strategy that failed the need has it.
	rows[1].Cells[1] = cell(cellBroken)
	if r := recommend(rows, []string{"baseline", "failover-lost-write"}, infos)[1]; r.Text != "redsync" {
		t.Errorf("redlock broke under failover: %q, want redsync without \"a quorum lock\"", r.Text)
	}
}

// TestChooserGroups: rows come grouped by StrategyInfo.Group (groups in
// order of their first strategy); a file without groups derives them
// from claims and library.
func TestChooserGroups(t *testing.T) {
	infos := []results.StrategyInfo{
		{Name: "token-lua"}, {Name: "redsync", Library: "github.com/go-redsync/redsync/v4 v4.18.1", Claims: []string{"quorum"}},
		{Name: "redlock", Claims: []string{"quorum"}}, {Name: "fenced", Claims: []string{"fencing"}},
		{Name: "etcd-mutex", Group: "consensus locks"}, {Name: "watchdog"},
	}
	var runs []results.Run
	var names []string
	for _, in := range infos {
		runs = append(runs, chooserRun(func(r *results.Run) { r.Strategy, r.Scenario = in.Name, "baseline" }))
		names = append(names, in.Name)
	}
	rows := buildChooser(runs, nil, names, []string{"baseline"}, figures.Summarize(runs), infos)
	var got []string
	for _, r := range rows {
		g := ""
		if r.FirstOfGroup {
			g = r.Group + ": "
		}
		got = append(got, g+r.Strategy)
	}
	want := "Redis single-node: token-lua, watchdog, libraries: redsync, Redis quorum: redlock, fenced: fenced, consensus locks: etcd-mutex"
	if strings.Join(got, ", ") != want {
		t.Errorf("rows %q, want %q", strings.Join(got, ", "), want)
	}
}

// TestReportOfSchema4File: a real schema 4 results.json (fenced under
// failover-lost-write), written before strategies had groups and runs
// their scenario kind, still renders with its chooser first; its group
// comes from its claims.
func TestReportOfSchema4File(t *testing.T) {
	f, err := results.Load(filepath.Join("..", "results", "testdata", "schema-v4.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteReport(dir, f, nil); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, results.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| fenced | **fenced** |", " broken: lost updates, fencing tokens not increasing |"} {
		if i := strings.Index(string(md), want); i < 0 || i > 2000 {
			t.Errorf("report.md has the chooser row's %q at %d, want it near the top:\n%s", want, i, md)
		}
	}
}

// TestLikeForLike checks the sentence on the cost cells' timing: alike
// whatever the TTL, or not alike with who ran what.
func TestLikeForLike(t *testing.T) {
	run := func(st, sc, cs string, ttl, think float64) results.Run {
		return results.Run{Strategy: st, Scenario: sc, Config: results.RunConfig{CSMs: cs, TTLMs: ttl, ThinkMs: think}}
	}
	tests := []struct {
		name string
		runs []results.Run
		want []string // substrings; nil: ""
	}{
		{"none", []results.Run{run("token-lua", "gc-pause", "fixed(5ms)", 100, 0)}, nil},
		{"alike", []results.Run{run("token-lua", "baseline", "fixed(5ms)", 100, 0), run("redlock", "baseline", "fixed(5ms)", 100, 0),
			run("etcd-mutex", "baseline", "fixed(5ms)", 1000, 0), run("etcd-mutex", "gc-pause", "fixed(50ms)", 1000, 0)},
			[]string{"Like for like", "fixed(5ms) and no think time", "(100 ms; etcd-mutex at 1000 ms"}},
		{"not alike", []results.Run{run("token-lua", "baseline", "fixed(5ms)", 100, 0), run("zk-lock", "baseline", "fixed(50ms)", 1000, 0)},
			[]string{"NOT like for like", "fixed(5ms), no think time: token-lua", "fixed(50ms), no think time: zk-lock"}},
		{"think", []results.Run{run("token-lua", "baseline", "fixed(5ms)", 100, 2)}, []string{"think time 2.00 ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := likeForLike(tt.runs)
			if (got == "") != (tt.want == nil) {
				t.Fatalf("likeForLike = %q", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("likeForLike = %q, want %q in it", got, w)
				}
			}
		})
	}
}
