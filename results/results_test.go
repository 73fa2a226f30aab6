package results

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/stats"
)

func TestWriteLoadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	f := sampleFile()
	if err := Write(dir, f); err != nil {
		t.Fatal(err)
	}
	if f.SchemaVersion != 0 {
		t.Errorf("Write modified its input: SchemaVersion = %d", f.SchemaVersion)
	}
	got, err := Load(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	want := *f
	want.SchemaVersion = SchemaVersion
	want.CostTable = CostTableOf(f)
	if len(want.CostTable) == 0 {
		t.Error("Write wrote no cost table for a file with baseline and cost runs")
	}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, &want)
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), fmt.Sprintf("\n  \"schema_version\": %d,", SchemaVersion)) {
		t.Errorf("results.json is not indented or lacks schema_version:\n%.200s", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("folder holds %d entries, want only %s and %s (no temporary files)", len(entries), FileName, BenchText)
	}
}

func TestWriteRefusesOtherVersion(t *testing.T) {
	f := sampleFile()
	f.SchemaVersion = SchemaVersion + 1
	err := Write(t.TempDir(), f)
	if !errors.Is(err, ErrSchemaVersion) {
		t.Fatalf("Write of schema_version %d: err = %v, want ErrSchemaVersion", f.SchemaVersion, err)
	}
}

// TestLoadErrors loads the fixtures in testdata: real schema 1, 2 and 3
// files (older), a real schema 2 file cut at two thirds, a real schema 4
// file claiming schema 5, one without schema_version, and hand-made broken
// ones. Each error must wrap ErrCorrupt (exit 2) and name the file, the
// problem and the fix.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name     string
		fixture  string // file in testdata, or "" for content
		content  string // written to a temporary file; "" with no fixture: the file does not exist
		is       error
		mentions []string
	}{
		{name: "missing file", is: os.ErrNotExist, mentions: []string{"no such file"}},
		{name: "older schema", fixture: "schema-v1.json", is: ErrSchemaVersion,
			mentions: []string{"schema-v1.json", "schema version 1, this lockbench reads 4", "rerun lockbench bench", "lockbench 0.1.0, which wrote it"}},
		{name: "schema 2", fixture: "schema-v2.json", is: ErrSchemaVersion,
			mentions: []string{"schema-v2.json", "schema version 2, this lockbench reads 4", "rerun lockbench bench"}},
		{name: "schema 3", fixture: "schema-v3.json", is: ErrSchemaVersion,
			mentions: []string{"schema-v3.json", "schema version 3, this lockbench reads 4", "rerun lockbench bench", "lockbench 0.3.0, which wrote it"}},
		{name: "newer schema", fixture: "schema-v5.json", is: ErrSchemaVersion,
			mentions: []string{"schema-v5.json", "schema version 5, this lockbench reads 4", "newer lockbench (lockbench 9.0.0)", "upgrade lockbench"}},
		{name: "no schema_version", fixture: "no-version.json", is: ErrCorrupt,
			mentions: []string{"no-version.json", "no schema_version", "give the results.json of a lockbench"}},
		{name: "truncated", fixture: "truncated.json", is: ErrCorrupt,
			mentions: []string{"truncated.json", "is truncated", "rerun lockbench"}},
		{name: "not JSON, one character", content: "x\n", is: ErrCorrupt,
			mentions: []string{"not valid JSON at line 1, column 1", "invalid character 'x'"}},
		{name: "empty", content: "\n", is: ErrCorrupt, mentions: []string{"is empty"}},
		{name: "not JSON", content: "{\n  \"schema_version\": 4,\n  \"runs\": [}\n}", is: ErrCorrupt,
			mentions: []string{"not valid JSON at line 3, column", "rerun lockbench"}},
		{name: "history given", content: `{"schema_version":1,"strategy":"x"}` + "\n" + `{"client":0}` + "\n", is: ErrCorrupt,
			mentions: []string{"not valid JSON at line 2"}},
		{name: "wrong type", content: `{"schema_version": 4, "runs": "many"}`, is: ErrCorrupt,
			mentions: []string{`field "runs"`, "line 1", "holds a JSON string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			switch {
			case tt.fixture != "":
				path = filepath.Join("testdata", tt.fixture)
			case tt.content != "":
				if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := Load(path)
			if err == nil {
				t.Fatalf("Load = %+v, want an error", f)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.is)
			}
			if tt.is != os.ErrNotExist && !errors.Is(err, ErrCorrupt) {
				t.Errorf("err = %v, want it to wrap ErrCorrupt (exit 2)", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q, want one line", err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %q, want it to mention %q", err, m)
				}
			}
		})
	}
}

// TestLoadSchema4Fixture loads a real schema 4 file (fenced under
// failover-lost-write, 4 clients): the fields of schema 2, the run's
// evidence and witnesses (schema 3) and its cost windows, command counter,
// machine noise and host statics (schema 4) are there, and the windows
// hold the run's grants.
func TestLoadSchema4Fixture(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "schema-v4.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Runs[0]
	if f.Commit == "" || f.Seed != 1 || f.Repeat != 1 || f.Host.CPUModel == "" || f.Host.Kernel == "" || f.Host.MemoryMB == 0 {
		t.Errorf("file fields: commit %q seed %d repeat %d host %+v", f.Commit, f.Seed, f.Repeat, f.Host)
	}
	if r.Fairness <= 0 || r.Fairness > 1 || r.Errors.NotAcquired != r.Acquires["fail"] || r.AcquireLatencyMs.P999 < r.AcquireLatencyMs.P99 {
		t.Errorf("run fields: fairness %v errors %+v acquires %v latency %+v", r.Fairness, r.Errors, r.Acquires, r.AcquireLatencyMs)
	}
	e, w := r.Evidence, r.Witnesses
	if e.Holds != r.Grants || e.Acquires.OK != r.Acquires["ok"] || e.Clients != 4 || e.ChancesToOverlap == 0 || e.Faults != len(r.Faults) {
		t.Errorf("evidence %+v, grants %d, acquires %v, faults %d", e, r.Grants, r.Acquires, len(r.Faults))
	}
	if len(w.Exclusion) == 0 || w.Total.Exclusion != len(w.Exclusion) || len(w.Resource) == 0 || w.Resource[0].Write == nil || w.Resource[0].Read == nil ||
		len(w.Exclusion)+len(w.Resource) != r.Violations {
		t.Errorf("witnesses %+v, violations %d", w, r.Violations)
	}
	if len(r.Windows) != WindowsPerRun || len(r.CommandCounter) != WindowsPerRun+1 || r.Noise == nil || r.Noise.Samples == 0 || len(r.Noise.RTTBefore) == 0 {
		t.Fatalf("schema 4 fields: %d windows, %d counter samples, noise %+v", len(r.Windows), len(r.CommandCounter), r.Noise)
	}
	grants := 0
	for _, w := range r.Windows {
		grants += w.Grants
	}
	if grants != r.Grants || len(r.Samples(FigureGrantsPerS)) != WindowsPerRun {
		t.Errorf("windows hold %d grants, run %d; %d grants/s samples", grants, r.Grants, len(r.Samples(FigureGrantsPerS)))
	}
}

func TestJainIndex(t *testing.T) {
	tests := []struct {
		name    string
		in      []float64
		want    float64
		wantErr bool
	}{
		{"equal", []float64{5, 5, 5, 5}, 1, false},
		{"one has all", []float64{12, 0, 0, 0}, 0.25, false},
		{"two of four", []float64{3, 3, 0, 0}, 0.5, false},
		{"uneven", []float64{1, 2, 3}, 36.0 / 42, false},
		{"single client", []float64{7}, 1, false},
		{"no grants", []float64{0, 0}, 0, false},
		{"empty", nil, 0, false},
		{"negative", []float64{1, -1}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := stats.JainIndex(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("JainIndex(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestPercentiles(t *testing.T) {
	oneTo100 := make([]float64, 100)
	for i := range oneTo100 {
		oneTo100[100-1-i] = float64(i + 1) // descending: Percentiles must sort
	}
	tests := []struct {
		name    string
		in      []float64
		want    stats.Latency
		wantErr bool
	}{
		{"empty", nil, stats.Latency{}, false},
		{"one", []float64{7}, stats.Latency{P50: 7, P90: 7, P99: 7, P999: 7, Max: 7, Samples: 1}, false},
		// Linear interpolation: rank = p/100·(n−1) over 1..100.
		{"1..100", oneTo100, stats.Latency{P50: 50.5, P90: 90.1, P99: 99.01, P999: 99.901, Max: 100, Samples: 100}, false},
		{"two", []float64{10, 20}, stats.Latency{P50: 15, P90: 19, P99: 19.9, P999: 19.99, Max: 20, Samples: 2}, false},
		{"NaN", []float64{1, math.NaN()}, stats.Latency{}, true},
		{"negative", []float64{1, -1}, stats.Latency{}, true},
		{"infinite", []float64{math.Inf(1)}, stats.Latency{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := stats.Percentiles(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			const eps = 1e-9
			if math.Abs(got.P50-tt.want.P50) > eps || math.Abs(got.P90-tt.want.P90) > eps ||
				math.Abs(got.P99-tt.want.P99) > eps || math.Abs(got.P999-tt.want.P999) > eps || got.Max != tt.want.Max || got.Samples != tt.want.Samples {
				t.Errorf("Percentiles = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		in   []float64
		want stats.Spread
	}{
		{nil, stats.Spread{}},
		{[]float64{3}, stats.Spread{Median: 3, Min: 3, Max: 3, N: 1}},
		{[]float64{5, 1, 3}, stats.Spread{Median: 3, Min: 1, Max: 5, N: 3}},
		{[]float64{4, 1, 2, 10}, stats.Spread{Median: 3, Min: 1, Max: 10, N: 4}},
		{[]float64{math.NaN(), 2}, stats.Spread{Median: 2, Min: 2, Max: 2, N: 1}},
	}
	for _, tt := range tests {
		if got := stats.SpreadOf(tt.in); got != tt.want {
			t.Errorf("SpreadOf(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	f := sampleFile()
	errRun := f.Runs[0]
	errRun.Seed = 4
	errRun.Error = "redis-server: port in use"
	errRun.AsExpected = false
	errRun.ThroughputPerS = 1e9 // must not enter the spread
	runs := append(f.Runs, errRun)

	got := Summarize(runs)
	var order []string
	for _, s := range got {
		order = append(order, s.Strategy+"/"+s.Scenario)
	}
	wantOrder := []string{"token-lua/baseline", "set-nx-px/baseline", "token-lua/pause-holder", "set-nx-px/pause-holder", "<script>alert(1)</script>/baseline"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Fatalf("groups = %v, want %v", order, wantOrder)
	}
	tl := got[0]
	if tl.Seeds != 4 || tl.AsExpected != 3 || tl.Errors != 1 {
		t.Errorf("token-lua/baseline seeds/as-expected/errors = %d/%d/%d, want 4/3/1", tl.Seeds, tl.AsExpected, tl.Errors)
	}
	if want := (stats.Spread{Median: 1000, Min: 900, Max: 1200, N: 3}); tl.ThroughputPerS != want {
		t.Errorf("throughput = %+v, want %+v", tl.ThroughputPerS, want)
	}
	if want := (stats.Spread{Median: 10, Min: 9, Max: 12, N: 3}); tl.P99Ms != want {
		t.Errorf("p99 = %+v, want %+v", tl.P99Ms, want)
	}
	if tl.Observed[ObservedHeld] != 3 || tl.Observed[ObservedError] != 1 {
		t.Errorf("observed = %v, want 3 held and 1 error", tl.Observed)
	}
	if got[3].Violations != 2 || got[3].AsExpected != 0 {
		t.Errorf("set-nx-px/pause-holder violations=%d as-expected=%d, want 2 and 0", got[3].Violations, got[3].AsExpected)
	}
	if Summarize(nil) == nil || len(Summarize(nil)) != 0 {
		t.Errorf("Summarize(nil) = %v, want an empty slice", Summarize(nil))
	}
}

func TestObserved(t *testing.T) {
	tests := []struct {
		r    Run
		want string
	}{
		{Run{Verdict: Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok"}}, ObservedHeld},
		{Run{Verdict: Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok", Fencing: "violated"}}, ObservedViolated},
		{Run{Verdict: Verdict{Exclusion: "inconclusive", Resource: "violated"}}, ObservedViolated},
		{Run{Verdict: Verdict{Exclusion: "inconclusive", Resource: "ok"}}, ObservedInconclusive},
		{Run{Error: "boom", Verdict: Verdict{Exclusion: "violated"}}, ObservedError},
	}
	for _, tt := range tests {
		if got := Observed(tt.r); got != tt.want {
			t.Errorf("Observed(%+v) = %q, want %q", tt.r.Verdict, got, tt.want)
		}
	}
}

// TestSummarizeRepeats: every performance figure of a cell is a median with
// min–max over its repeats; fairness leaves out runs without a grant.
func TestSummarizeRepeats(t *testing.T) {
	run := func(seed int64, tput, p999, fair float64, grants, lost int) Run {
		return Run{Strategy: "s", Scenario: "c", Seed: seed, Grants: grants, ThroughputPerS: tput, Fairness: fair,
			AcquireLatencyMs: stats.Latency{P50: 1, P90: 2, P99: 3, P999: p999, Max: 9, Samples: grants},
			Errors:           ErrorBreakdown{NotAcquired: 10 * lost, Lost: lost, ExpiredOnRelease: 2 * lost, Info: lost + 1}}
	}
	got := Summarize([]Run{run(1, 100, 4, 0.9, 50, 1), run(2, 120, 8, 0.5, 60, 3), run(3, 0, 0, 0, 0, 2)})[0]
	for _, c := range []struct {
		name      string
		got, want stats.Spread
	}{
		{"throughput", got.ThroughputPerS, stats.Spread{Median: 100, Min: 0, Max: 120, N: 3}},
		{"p99.9", got.P999Ms, stats.Spread{Median: 6, Min: 4, Max: 8, N: 2}},
		{"p90", got.P90Ms, stats.Spread{Median: 2, Min: 2, Max: 2, N: 2}},
		{"fairness", got.Fairness, stats.Spread{Median: 0.7, Min: 0.5, Max: 0.9, N: 2}},
		{"not acquired", got.NotAcquired, stats.Spread{Median: 20, Min: 10, Max: 30, N: 3}},
		{"lost", got.Lost, stats.Spread{Median: 2, Min: 1, Max: 3, N: 3}},
		{"expired on release", got.ExpiredOnRelease, stats.Spread{Median: 4, Min: 2, Max: 6, N: 3}},
		{"info", got.InfoOps, stats.Spread{Median: 3, Min: 2, Max: 4, N: 3}},
	} {
		if math.Abs(c.got.Median-c.want.Median) > 1e-9 || c.got.Min != c.want.Min || c.got.Max != c.want.Max || c.got.N != c.want.N {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

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
	f := &File{Profile: "run", Started: "2026-12-01T00:00:00Z",
		Runs:  []Run{{History: "histories/a-b-1.jsonl", Visualization: "histories/a-b-1.html"}, {History: "../outside.jsonl"}},
		Sweep: []Run{{History: "histories/sweep-4.jsonl"}}}
	if err := Write(dir, f); err != nil {
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
	for _, p := range []string{outside, filepath.Join(dir, FileName)} {
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
