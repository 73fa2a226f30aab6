package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/internal/resultstest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

func TestParseRegression(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"10%", 0.1, ""},
		{"0.1", 0.1, ""},
		{" 2.5% ", 0.025, ""},
		{"0", 0, ""},
		{"0%", 0, ""},
		{"1", 1, ""},
		{"100%", 1, ""},
		{"150%", 0, "above 100%"},
		{"100.5%", 0, "valid range is 0-100%"},
		{"10", 0, "ambiguous"},
		{"-5%", 0, "negative"},
		{"ten", 0, "not a number"},
		{"", 0, "not a number"},
		{"NaN", 0, "not a number"},
	}
	for _, tt := range tests {
		got, err := ParseRegression(tt.in)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseRegression(%q) err = %v, want one mentioning %q", tt.in, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || abs(got-tt.want) > 1e-12):
			t.Errorf("ParseRegression(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestBeyond covers the threshold's edges: exactly at the threshold is
// not beyond, just past it is; improvements never are.
func TestBeyond(t *testing.T) {
	one := func(v float64) stats.Estimate { return stats.Estimate{Median: v, Low: v, High: v, N: 6} }
	tests := []struct {
		name          string
		old, new      stats.Estimate
		thr           float64
		higherIsWorse bool
		want          bool
	}{
		{"throughput same", one(100), one(100), 0.1, false, false},
		{"throughput −10% at threshold", one(100), one(90), 0.1, false, false},
		{"throughput −10.1% beyond", one(100), one(89.9), 0.1, false, true},
		{"throughput +50% is better", one(100), one(150), 0.1, false, false},
		{"p99 +10% at threshold", one(10), one(11), 0.1, true, false},
		{"p99 +10.5% beyond", one(10), one(11.05), 0.1, true, true},
		{"p99 −50% is better", one(10), one(5), 0.1, true, false},
		{"threshold 0 flags any worsening", one(100), one(99.99), 0, false, true},
		{"threshold 0, equal", one(100), one(100), 0, false, false},
		{"old median 0", one(0), one(50), 0.1, true, false},
		{"no old values", stats.Estimate{}, one(50), 0.1, false, false},
		{"no new values", one(50), stats.Estimate{}, 0.1, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Beyond(Change{Old: tt.old, New: tt.new}, tt.thr, tt.higherIsWorse); got != tt.want {
				t.Errorf("Beyond(%+v, %+v, %v, %v) = %v, want %v", tt.old, tt.new, tt.thr, tt.higherIsWorse, got, tt.want)
			}
		})
	}
}

// compareFile is a small bench: a must-hold cell, a must-break canary and
// an at-risk cell, with repeats seeds each.
func compareFile(repeats int) *results.File {
	f := &results.File{SchemaVersion: results.SchemaVersion, Host: results.Host{CPUs: 2, OS: "linux/amd64", CPUModel: "cpu", Kernel: "6.1"}, Redis: "7.0"}
	ok := results.Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok"}
	bad := results.Verdict{Exclusion: "violated", Resource: "violated", Liveness: "ok"}
	for i := range repeats {
		seed := int64(i + 1)
		f.Runs = append(f.Runs,
			results.Run{Strategy: "token-lua", Scenario: "baseline", Seed: seed, Expected: "must-hold", AsExpected: true, Verdict: ok,
				ExpectedChecks: map[string]string{"exclusion": "hold", "resource": "hold", "liveness": "hold"},
				Grants:         5000, AcquireLatencyMs: stats.Latency{Samples: 100}, Config: results.RunConfig{Clients: 16, TTLMs: 100}},
			results.Run{Strategy: "token-lua", Scenario: "gc-pause", Seed: seed, Expected: "must-break", AsExpected: true, Verdict: bad,
				ExpectedChecks: map[string]string{"exclusion": "break", "resource": "break", "liveness": "hold"},
				Grants:         1500, AcquireLatencyMs: stats.Latency{Samples: 50}, Config: results.RunConfig{Clients: 16, TTLMs: 100}},
			results.Run{Strategy: "watchdog", Scenario: "random", Seed: seed, Expected: "at-risk", AsExpected: true, Verdict: ok,
				ExpectedChecks: map[string]string{"exclusion": "at-risk", "resource": "at-risk", "liveness": "hold"},
				Grants:         2500, AcquireLatencyMs: stats.Latency{Samples: 80}, Config: results.RunConfig{Clients: 16, TTLMs: 100}},
		)
		n := len(f.Runs)
		resultstest.SetPerf(&f.Runs[n-3], 1000, 10)
		resultstest.SetPerf(&f.Runs[n-2], 300, 200)
		resultstest.SetPerf(&f.Runs[n-1], 500, 30)
	}
	return f
}

// each applies fn to every repeat of cell i (0 token-lua/baseline,
// 1 token-lua/gc-pause, 2 watchdog/random) of a compareFile.
func each(f *results.File, i int, fn func(*results.Run)) {
	for j := i; j < len(f.Runs); j += 3 {
		fn(&f.Runs[j])
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name      string
		repeats   int // per side; 0: 2
		change    func(*results.File)
		oldChange func(*results.File) // applied to OLD; nil: none
		gated     []string            // kinds of gated findings, in order
		notes     []string            // kinds of findings not gated
		warn      string
	}{
		{name: "identical", change: func(*results.File) {}},
		{name: "must-hold violated in one repeat", change: func(f *results.File) {
			f.Runs[3].Verdict.Exclusion, f.Runs[3].AsExpected = "violated", false
		}, gated: []string{FindingNewViolation}},
		{name: "canary lost in one repeat", change: func(f *results.File) {
			f.Runs[1].Verdict = results.Verdict{Exclusion: "ok", Resource: "violated", Liveness: "ok"}
		},
			gated: []string{FindingLostCanary}},
		{name: "must-hold with nothing checked", change: func(f *results.File) {
			f.Runs[0].Verdict.Exclusion, f.Runs[0].AsExpected = "skipped", false
			f.Runs[0].Unexpected = []string{"exclusion must hold but nothing was checked: no successful acquires"}
		}, gated: []string{FindingNewUnexpected}},
		{name: "canary inconclusive in one repeat: no lost canary, nothing unexpected", change: func(f *results.File) {
			f.Runs[1].Verdict = results.Verdict{Exclusion: "inconclusive", Resource: "inconclusive", Liveness: "ok"}
			f.Runs[1].AsExpected, f.Runs[1].Inconclusive = false, []string{"exclusion must break: inconclusive: 2 holds, 0 chances to overlap (need ≥ 10)"}
		}},
		{name: "unexpected in OLD too: not new", change: func(f *results.File) {}, oldChange: func(f *results.File) { f.Runs[0].AsExpected = false }},
		{name: "at-risk violated: reported, not gated", change: func(f *results.File) { f.Runs[2].Verdict.Exclusion = "violated" },
			notes: []string{FindingNewViolation}},
		{name: "cell missing", change: func(f *results.File) { f.Runs = f.Runs[:2] }, repeats: 1, gated: []string{FindingMissing}},
		{name: "cell failed to run", change: func(f *results.File) { each(f, 0, func(r *results.Run) { r.Error = "port in use" }) }, gated: []string{FindingMissing}},
		{name: "cell only in NEW", change: func(f *results.File) {
			f.Runs = append(f.Runs, results.Run{Strategy: "fenced", Scenario: "baseline", Verdict: results.Verdict{Exclusion: "ok"}})
		}, notes: []string{FindingNewCell}},
		{name: "throughput −20%", change: func(f *results.File) { each(f, 0, func(r *results.Run) { resultstest.SetPerf(r, 800, 10) }) }, gated: []string{FindingThroughput}},
		{name: "throughput −20%, one run a side: reported, not gated (one run's windows understate the spread between runs)", repeats: 1, change: func(f *results.File) { each(f, 0, func(r *results.Run) { resultstest.SetPerf(r, 800, 10) }) },
			notes: []string{FindingThroughput}},
		{name: "throughput −20%, 3 windows a side: too few to tell", repeats: 1, change: func(f *results.File) {
			each(f, 0, func(r *results.Run) { resultstest.SetPerf(r, 800, 10); r.Windows = r.Windows[:3] })
		}, oldChange: func(f *results.File) { each(f, 0, func(r *results.Run) { r.Windows = r.Windows[:3] }) }, notes: []string{FindingThroughput}},
		{name: "throughput −20% within noise: not significant", change: func(f *results.File) {
			each(f, 0, func(r *results.Run) {
				for i := range r.Windows {
					r.Windows[i].GrantsPerS = []float64{200, 1400, 800, 1500, 300, 790}[i]
				}
			})
		}, notes: []string{FindingThroughput}},
		{name: "throughput −5%: within", change: func(f *results.File) { each(f, 0, func(r *results.Run) { resultstest.SetPerf(r, 950, 10) }) }},
		{name: "p99 ×2", change: func(f *results.File) { each(f, 2, func(r *results.Run) { resultstest.SetPerf(r, 500, 60) }) }, gated: []string{FindingP99}},
		{name: "busy machine: performance not gated", change: func(f *results.File) {
			each(f, 2, func(r *results.Run) {
				resultstest.SetPerf(r, 500, 90)
				r.Noise = &noise.Summary{Busy: true, Why: "other processes used 0.9 cores"}
			})
		}, notes: []string{FindingP99}},
		{name: "outside the working envelope: performance not gated", change: func(f *results.File) {
			each(f, 0, func(r *results.Run) {
				resultstest.SetPerf(r, 500, 10)
				r.Envelope = &results.Envelope{BudgetMs: 5, RTTP99Ms: 7, Why: "budget below RTT"}
			})
		}, notes: []string{FindingThroughput}},
		{name: "other host: performance not gated", change: func(f *results.File) {
			f.Host.CPUModel = "other cpu"
			each(f, 0, func(r *results.Run) { resultstest.SetPerf(r, 500, 10) })
		}, notes: []string{FindingThroughput}, warn: "different hosts"},
		{name: "other client count: performance not gated", change: func(f *results.File) {
			each(f, 0, func(r *results.Run) { r.Config.Clients = 64; resultstest.SetPerf(r, 500, 10) })
		}, notes: []string{FindingThroughput}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.repeats
			if n == 0 {
				n = 2
			}
			newF := compareFile(n)
			tt.change(newF)
			oldF := compareFile(n)
			if tt.oldChange != nil {
				tt.oldChange(oldF)
			}
			c := Compare(oldF, newF, "old", "new", DefaultMaxRegression)
			var gated, notes []string
			for _, cc := range c.Cells {
				for _, f := range cc.Findings {
					if f.Gated {
						gated = append(gated, f.Kind)
					} else {
						notes = append(notes, f.Kind)
					}
				}
			}
			if strings.Join(gated, ",") != strings.Join(tt.gated, ",") || strings.Join(notes, ",") != strings.Join(tt.notes, ",") {
				t.Errorf("gated %v notes %v, want %v and %v", gated, notes, tt.gated, tt.notes)
			}
			if c.Failed() != (len(tt.gated) > 0) || c.Gated != len(tt.gated) {
				t.Errorf("Failed() = %v, Gated = %d, want %d gated", c.Failed(), c.Gated, len(tt.gated))
			}
			if tt.warn != "" && !strings.Contains(strings.Join(c.Warnings, "\n"), tt.warn) {
				t.Errorf("warnings %q, want one mentioning %q", c.Warnings, tt.warn)
			}
			var b bytes.Buffer
			if err := c.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.gated {
				if !strings.Contains(b.String(), "FAIL ") || !strings.Contains(b.String(), k) {
					t.Errorf("text lacks FAIL line for %s:\n%s", k, b.String())
				}
			}
		})
	}
}

// TestCompareSetupWarnings: OLD and NEW set up differently (profile,
// backend, image, library settings, a policy or fencing override) compare
// with a warning naming the difference; the same setup warns nothing.
func TestCompareSetupWarnings(t *testing.T) {
	tests := []struct {
		name   string
		change func(*results.File)
		warn   string // "" : no warning
	}{
		{"same setup", func(*results.File) {}, ""},
		{"profile", func(f *results.File) { f.Profile = "full" }, "different profiles (OLD ci, NEW full)"},
		{"backend", func(f *results.File) { f.Config.Workload.Backend = "docker"; f.Config.Workload.Image = "redis:7.4" }, "different backends (OLD process, NEW docker)"},
		{"backend from the runs", func(f *results.File) {
			for i := range f.Runs {
				f.Runs[i].Config.Backend = "external"
			}
		}, "different backends (OLD process, NEW external)"},
		{"image", func(f *results.File) {
			f.Config.Workload.Backend = "docker"
			f.Config.Workload.Image = "lockbench/redis:local"
		}, "different Redis images (OLD redis:7.4, NEW lockbench/redis:local)"},
		{"library", func(f *results.File) {
			each(f, 0, func(r *results.Run) { r.Config.Library = map[string]string{"redsync-tries": "3"} })
		}, "different library settings (config.library) in 1 cell(s), e.g. token-lua/baseline: OLD redsync-tries=1, NEW redsync-tries=3"},
		{"policy", func(f *results.File) { each(f, 1, func(r *results.Run) { r.Config.Policy = nil }) }, "different usage policy (--policy) in 1 cell(s), e.g. token-lua/gc-pause: OLD check-validity, NEW none"},
		{"fencing", func(f *results.File) { each(f, 2, func(r *results.Run) { r.Config.Fencing = "all" }) }, "different fencing mode (--fencing) in 1 cell(s), e.g. watchdog/random: OLD writes, NEW all"},
		{"interrupted", func(f *results.File) { f.Incomplete = "interrupted after 7 of 82 runs" }, "NEW is incomplete (interrupted after 7 of 82 runs): the cells it did not run are reported missing"},
	}
	setup := func(f *results.File, imageSide bool) {
		if imageSide {
			f.Config.Workload.Backend, f.Config.Workload.Image = "docker", "redis:7.4"
		}
		each(f, 0, func(r *results.Run) { r.Config.Library = map[string]string{"redsync-tries": "1"} })
		each(f, 1, func(r *results.Run) { r.Config.Policy = []string{"check-validity"} })
		each(f, 2, func(r *results.Run) { r.Config.Fencing = "writes" })
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldF, newF := compareFile(2), compareFile(2)
			oldF.Profile, newF.Profile = "ci", "ci"
			image := tt.name == "image"
			setup(oldF, image)
			setup(newF, image)
			tt.change(newF)
			c := Compare(oldF, newF, "old", "new", DefaultMaxRegression)
			got := strings.Join(c.Warnings, "\n")
			if tt.warn == "" {
				if got != "" {
					t.Errorf("warnings %q, want none", got)
				}
				return
			}
			if !strings.Contains(got, tt.warn) {
				t.Errorf("warnings %q, want one mentioning %q", got, tt.warn)
			}
			var b bytes.Buffer
			if err := c.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "warning: "+strings.SplitN(tt.warn, " (", 2)[0]) {
				t.Errorf("text lacks the warning line:\n%s", b.String())
			}
		})
	}
}

// TestCompareSignificance: a NEW median 15% lower whose windows overlap
// OLD's is noise ("~", not gated); once NEW's windows all lie below OLD's
// it is a significant regression, with benchstat's text.
func TestCompareSignificance(t *testing.T) {
	set := func(f *results.File, vals ...float64) {
		each(f, 0, func(r *results.Run) {
			for i := range r.Windows {
				r.Windows[i].GrantsPerS = vals[i]
			}
		})
	}
	oldF, newF := compareFile(MinGateSeeds), compareFile(MinGateSeeds)
	set(oldF, 1000, 800, 1100, 950, 1050, 900)
	set(newF, 850, 820, 1000, 700, 1150, 790)
	c := Compare(oldF, newF, "old", "new", 0.1)
	if c.Failed() {
		t.Errorf("overlapping windows flagged: %+v", c.Cells[0].Findings)
	}
	if tp := c.Cells[0].ThroughputPerS.Test; tp.Significant || tp.Delta != "~" || tp.N1 != 6*MinGateSeeds || tp.N2 != 6*MinGateSeeds {
		t.Errorf("overlapping windows: test %+v, want ~ with n=6+6", tp)
	}
	set(newF, 700, 750, 790, 720, 760, 740)
	c = Compare(oldF, newF, "old", "new", 0.1)
	if !c.Failed() || c.Cells[0].Findings[0].Kind != FindingThroughput {
		t.Fatalf("separated windows not flagged: %+v", c.Cells[0].Findings)
	}
	if r := c.Cells[0].ThroughputPerS.Relative; abs(r-(745.0-975)/975) > 1e-12 {
		t.Errorf("relative change of medians = %v, want %v", r, (745.0-975)/975)
	}
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"975 [900, 1050] (n=12) → 745 [720, 760] (n=12) -23.59% (p=0.000 n=12)", "FAIL token-lua/baseline: throughput"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestLoadPath(t *testing.T) {
	dir := t.TempDir()
	if err := figures.Write(dir, compareFile(1)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, results.FileName)} {
		if _, path, err := results.LoadPath(p); err != nil || path != filepath.Join(dir, results.FileName) {
			t.Errorf("LoadPath(%s) = %s, %v", p, path, err)
		}
	}
	empty := t.TempDir()
	if _, _, err := results.LoadPath(empty); err == nil || !os.IsNotExist(err) && !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("LoadPath(empty folder) err = %v, want a not-exist error", err)
	}
}

// TestWriteTextCellCount: the summary line counts cells in the singular
// for one.
func TestWriteTextCellCount(t *testing.T) {
	for _, tt := range []struct {
		cells int
		want  string
	}{{1, "\n1 cell compared, "}, {2, "\n2 cells compared, "}} {
		c := Comparison{Old: "a", New: "b", MaxRegression: 0.1, Cells: make([]CellComparison, tt.cells)}
		var b strings.Builder
		if err := c.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tt.want) {
			t.Errorf("%d cells: %q lacks %q", tt.cells, b.String(), tt.want)
		}
	}
}

// TestCompareOldIncomplete: an incomplete OLD gets one warning saying its
// missing cells are listed as only in NEW (not "reported missing", which
// is what an incomplete NEW gets).
func TestCompareOldIncomplete(t *testing.T) {
	oldF, newF := compareFile(2), compareFile(2)
	oldF.Incomplete = "interrupted after 3 of 82 runs"
	c := Compare(oldF, newF, "old", "new", DefaultMaxRegression)
	got := strings.Join(c.Warnings, "\n")
	want := "OLD is incomplete (interrupted after 3 of 82 runs): the cells it did not run are listed as only in NEW, not compared"
	if !strings.Contains(got, want) || strings.Count(got, "incomplete") != 1 {
		t.Errorf("warnings %q, want exactly one incomplete warning: %q", got, want)
	}
}
