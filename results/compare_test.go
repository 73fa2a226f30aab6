package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestRegressed covers the threshold's edges: exactly at the threshold is
// not flagged, just beyond is; with repeats on both sides overlapping
// ranges are noise.
func TestRegressed(t *testing.T) {
	one := func(v float64) Spread { return Spread{Median: v, Min: v, Max: v, N: 1} }
	tests := []struct {
		name          string
		old, new      Spread
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
		{"no old values", Spread{}, one(50), 0.1, false, false},
		{"no new values", one(50), Spread{}, 0.1, false, false},
		{"repeats, ranges overlap: noise", Spread{100, 80, 120, 3}, Spread{85, 70, 95, 3}, 0.1, false, false},
		{"repeats, ranges apart", Spread{100, 95, 120, 3}, Spread{80, 70, 90, 3}, 0.1, false, true},
		{"repeats, p99 ranges touch", Spread{10, 9, 12, 3}, Spread{14, 12, 15, 3}, 0.1, true, false},
		{"repeats, p99 ranges apart", Spread{10, 9, 12, 3}, Spread{14, 12.5, 15, 3}, 0.1, true, true},
		{"one side single: threshold only", Spread{100, 80, 120, 3}, one(85), 0.1, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Regressed(tt.old, tt.new, tt.thr, tt.higherIsWorse); got != tt.want {
				t.Errorf("Regressed(%+v, %+v, %v, %v) = %v, want %v", tt.old, tt.new, tt.thr, tt.higherIsWorse, got, tt.want)
			}
		})
	}
}

// compareFile is a small bench: a must-hold cell, a must-break canary and
// an at-risk cell, with repeats seeds each.
func compareFile(repeats int) *File {
	f := &File{SchemaVersion: SchemaVersion, Host: Host{CPUs: 2, OS: "linux/amd64", CPUModel: "cpu", Kernel: "6.1"}, Redis: "7.0"}
	ok := Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok"}
	bad := Verdict{Exclusion: "violated", Resource: "violated", Liveness: "ok"}
	for i := range repeats {
		seed := int64(i + 1)
		f.Runs = append(f.Runs,
			Run{Strategy: "token-lua", Scenario: "baseline", Seed: seed, Expected: "must-hold", AsExpected: true, Verdict: ok,
				ExpectedChecks: map[string]string{"exclusion": "hold", "resource": "hold", "liveness": "hold"},
				Grants:         5000, ThroughputPerS: 1000 + float64(i), AcquireLatencyMs: Latency{P99: 10, Samples: 100}, Config: RunConfig{Clients: 16, TTLMs: 100}},
			Run{Strategy: "token-lua", Scenario: "gc-pause", Seed: seed, Expected: "must-break", AsExpected: true, Verdict: bad,
				ExpectedChecks: map[string]string{"exclusion": "break", "resource": "break", "liveness": "hold"},
				Grants:         1500, ThroughputPerS: 300, AcquireLatencyMs: Latency{P99: 200, Samples: 50}, Config: RunConfig{Clients: 16, TTLMs: 100}},
			Run{Strategy: "watchdog", Scenario: "random", Seed: seed, Expected: "at-risk", AsExpected: true, Verdict: ok,
				ExpectedChecks: map[string]string{"exclusion": "at-risk", "resource": "at-risk", "liveness": "hold"},
				Grants:         2500, ThroughputPerS: 500, AcquireLatencyMs: Latency{P99: 30, Samples: 80}, Config: RunConfig{Clients: 16, TTLMs: 100}},
		)
	}
	return f
}

// each applies fn to every repeat of cell i (0 token-lua/baseline,
// 1 token-lua/gc-pause, 2 watchdog/random) of a compareFile.
func each(f *File, i int, fn func(*Run)) {
	for j := i; j < len(f.Runs); j += 3 {
		fn(&f.Runs[j])
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name      string
		repeats   int // per side; 0: 2
		change    func(*File)
		oldChange func(*File) // applied to OLD; nil: none
		gated     []string    // kinds of gated findings, in order
		notes     []string    // kinds of findings not gated
		warn      string
	}{
		{name: "identical", change: func(*File) {}},
		{name: "must-hold violated in one repeat", change: func(f *File) {
			f.Runs[3].Verdict.Exclusion, f.Runs[3].AsExpected = "violated", false
		}, gated: []string{FindingNewViolation}},
		{name: "canary lost in one repeat", change: func(f *File) { f.Runs[1].Verdict = Verdict{Exclusion: "ok", Resource: "violated", Liveness: "ok"} },
			gated: []string{FindingLostCanary}},
		{name: "must-hold with nothing checked", change: func(f *File) {
			f.Runs[0].Verdict.Exclusion, f.Runs[0].AsExpected = "skipped", false
			f.Runs[0].Unexpected = []string{"exclusion must hold but nothing was checked: no successful acquires"}
		}, gated: []string{FindingNewUnexpected}},
		{name: "unexpected in OLD too: not new", change: func(f *File) {}, oldChange: func(f *File) { f.Runs[0].AsExpected = false }},
		{name: "at-risk violated: reported, not gated", change: func(f *File) { f.Runs[2].Verdict.Exclusion = "violated" },
			notes: []string{FindingNewViolation}},
		{name: "cell missing", change: func(f *File) { f.Runs = f.Runs[:2] }, repeats: 1, gated: []string{FindingMissing}},
		{name: "cell failed to run", change: func(f *File) { each(f, 0, func(r *Run) { r.Error = "port in use" }) }, gated: []string{FindingMissing}},
		{name: "cell only in NEW", change: func(f *File) {
			f.Runs = append(f.Runs, Run{Strategy: "fenced", Scenario: "baseline", Verdict: Verdict{Exclusion: "ok"}})
		}, notes: []string{FindingNewCell}},
		{name: "throughput −20%", change: func(f *File) { each(f, 0, func(r *Run) { r.ThroughputPerS = 800 }) }, gated: []string{FindingThroughput}},
		{name: "throughput −20%, one run a side: not gated", repeats: 1, change: func(f *File) { each(f, 0, func(r *Run) { r.ThroughputPerS = 800 }) },
			notes: []string{FindingThroughput}},
		{name: "throughput −5%: within", change: func(f *File) { each(f, 0, func(r *Run) { r.ThroughputPerS = 950 }) }},
		{name: "p99 ×2", change: func(f *File) { each(f, 2, func(r *Run) { r.AcquireLatencyMs.P99 = 60 }) }, gated: []string{FindingP99}},
		{name: "few grants: performance not gated", change: func(f *File) {
			each(f, 2, func(r *Run) { r.Grants, r.AcquireLatencyMs.P99 = 99, 90 })
		}, notes: []string{FindingP99}},
		{name: "other host: performance not gated", change: func(f *File) {
			f.Host.CPUModel = "other cpu"
			each(f, 0, func(r *Run) { r.ThroughputPerS = 500 })
		}, notes: []string{FindingThroughput}, warn: "different hosts"},
		{name: "other client count: performance not gated", change: func(f *File) {
			each(f, 0, func(r *Run) { r.Config.Clients, r.ThroughputPerS = 64, 500 })
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
		change func(*File)
		warn   string // "" : no warning
	}{
		{"same setup", func(*File) {}, ""},
		{"profile", func(f *File) { f.Profile = "full" }, "different profiles (OLD ci, NEW full)"},
		{"backend", func(f *File) { f.Config.Workload.Backend = "docker"; f.Config.Workload.Image = "redis:7.4" }, "different backends (OLD process, NEW docker)"},
		{"backend from the runs", func(f *File) {
			for i := range f.Runs {
				f.Runs[i].Config.Backend = "external"
			}
		}, "different backends (OLD process, NEW external)"},
		{"image", func(f *File) { f.Config.Workload.Backend = "docker"; f.Config.Workload.Image = "lockbench/redis:local" }, "different Redis images (OLD redis:7.4, NEW lockbench/redis:local)"},
		{"library", func(f *File) {
			each(f, 0, func(r *Run) { r.Config.Library = map[string]string{"redsync-tries": "3"} })
		}, "different library settings (config.library) in 1 cell(s), e.g. token-lua/baseline: OLD redsync-tries=1, NEW redsync-tries=3"},
		{"policy", func(f *File) { each(f, 1, func(r *Run) { r.Config.Policy = nil }) }, "different usage policy (--policy) in 1 cell(s), e.g. token-lua/gc-pause: OLD check-validity, NEW none"},
		{"fencing", func(f *File) { each(f, 2, func(r *Run) { r.Config.Fencing = "all" }) }, "different fencing mode (--fencing) in 1 cell(s), e.g. watchdog/random: OLD writes, NEW all"},
		{"interrupted", func(f *File) { f.Incomplete = "interrupted after 7 of 82 runs" }, "NEW is incomplete (interrupted after 7 of 82 runs): the cells it did not run are reported missing"},
	}
	setup := func(f *File, imageSide bool) {
		if imageSide {
			f.Config.Workload.Backend, f.Config.Workload.Image = "docker", "redis:7.4"
		}
		each(f, 0, func(r *Run) { r.Config.Library = map[string]string{"redsync-tries": "1"} })
		each(f, 1, func(r *Run) { r.Config.Policy = []string{"check-validity"} })
		each(f, 2, func(r *Run) { r.Config.Fencing = "writes" })
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

// TestCompareRepeatsNoise: with three repeats per side, a NEW median 15%
// lower whose range overlaps OLD's is noise; once every NEW run is below
// every OLD run it is a regression.
func TestCompareRepeatsNoise(t *testing.T) {
	oldF := compareFile(3)
	for i, tput := range []float64{1000, 800, 1100} {
		oldF.Runs[3*i].ThroughputPerS = tput
	}
	newF := compareFile(3)
	for i, tput := range []float64{850, 820, 1000} {
		newF.Runs[3*i].ThroughputPerS = tput
	}
	if c := Compare(oldF, newF, "old", "new", 0.1); c.Failed() {
		t.Errorf("overlapping repeats flagged: %+v", c.Cells[0].Findings)
	}
	for i, tput := range []float64{700, 750, 790} {
		newF.Runs[3*i].ThroughputPerS = tput
	}
	c := Compare(oldF, newF, "old", "new", 0.1)
	if !c.Failed() || c.Cells[0].Findings[0].Kind != FindingThroughput {
		t.Errorf("separated repeats not flagged: %+v", c.Cells[0].Findings)
	}
	if r := c.Cells[0].ThroughputPerS.Relative; abs(r-(750.0-1000)/1000) > 1e-12 {
		t.Errorf("relative change of medians = %v, want −25%%", r)
	}
}

func TestLoadPath(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, compareFile(1)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, FileName)} {
		if _, path, err := LoadPath(p); err != nil || path != filepath.Join(dir, FileName) {
			t.Errorf("LoadPath(%s) = %s, %v", p, path, err)
		}
	}
	empty := t.TempDir()
	if _, _, err := LoadPath(empty); err == nil || !os.IsNotExist(err) && !strings.Contains(err.Error(), "does not exist") {
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
