package results

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sampleFile is a small bench: two strategies over two scenarios, three seeds
// for one pair, one unexpected result and one strategy name that is an HTML
// injection attempt.
func sampleFile() *File {
	run := func(strategy, scenario string, seed int64, expected string, v Verdict, asExpected bool, tput float64) Run {
		return Run{
			Strategy: strategy, Scenario: scenario, Seed: seed,
			Expected: expected, Reason: strategy + " under " + scenario + " because reasons",
			ExpectedChecks: map[string]string{"exclusion": "hold"},
			Verdict:        v, AsExpected: asExpected,
			Grants: int(tput * 5), ThroughputPerS: tput,
			Acquires:         map[string]int{"ok": int(tput * 5), "fail": 3, "info": 1},
			AcquireLatencyMs: Latency{P50: 1.5, P90: 3, P99: tput / 100, Max: 42, Samples: 100},
			Liveness:         LivenessFigures{LongestUnavailableMs: 120, RecoveryMs: -1, FailedShare: 0.25, InfoShare: 0.01},
			Config:           RunConfig{Clients: 8, Keys: 1, TTLMs: 100, DurationMs: 5000, CSMs: "fixed(5ms)", Retry: "exponential:2ms:20ms", Topology: "single"},
			Checks:           map[string]string{"exclusion": "no overlap", "resource": "linearizable"},
			History:          "histories/" + scenario + " seed.jsonl",
			Command:          "lockbench run --strategy " + strategy + " --scenario " + scenario,
		}
	}
	ok := Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok"}
	bad := Verdict{Exclusion: "violated", Resource: "violated", Liveness: "ok"}
	evil := "<script>alert(1)</script>"
	broken := run("set-nx-px", "pause-holder", 1, "must-hold", bad, false, 300)
	broken.Unexpected = []string{"exclusion violated: 2 overlapping holds"}
	broken.Violations = 2
	broken.Visualization = "javascript:alert(2)"
	broken.Faults = []Fault{{Name: "pause", StartMs: 1000, EndMs: 1300, Note: "SIGSTOP holder"}}
	return &File{
		Tool: "lockbench test", Redis: "7.2.4", Profile: "ci",
		Command: "lockbench bench --profile ci --seed 1",
		Started: "2025-01-01T00:00:00Z", Finished: "2025-01-01T00:01:00Z",
		Host: Host{CPUs: 2, OS: "linux/amd64", Go: "go1.26"},
		Strategies: []StrategyInfo{
			{Name: "token-lua", Summary: "SET NX PX + Lua release", Claims: []string{"token-release"}},
			{Name: "set-nx-px", Summary: "SET NX PX, DEL release", Policy: nil},
			{Name: evil, Summary: "an injection attempt", Source: "https://example.com/a?b=c&d=e"},
		},
		Runs: []Run{
			run("token-lua", "baseline", 1, "must-hold", ok, true, 1000),
			run("token-lua", "baseline", 2, "must-hold", ok, true, 1200),
			run("token-lua", "baseline", 3, "must-hold", ok, true, 900),
			run("set-nx-px", "baseline", 1, "must-hold", ok, true, 1100),
			run("token-lua", "pause-holder", 1, "must-break", bad, true, 500),
			broken,
			run(evil, "baseline", 1, "at-risk", ok, true, 10),
		},
	}
}

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
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, &want)
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n  \"schema_version\": 1,") {
		t.Errorf("results.json is not indented or lacks schema_version:\n%.200s", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only %s (no temporary files)", len(entries), FileName)
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

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string // "" means the file does not exist
		is      error
		mention string
	}{
		{"missing file", "", os.ErrNotExist, "no such file"},
		{"not JSON", "{\"schema_version\": 1, \"runs\": [", ErrCorrupt, "unexpected end"},
		{"wrong type", `{"schema_version": 1, "runs": "many"}`, ErrCorrupt, "runs"},
		{"no version", `{"tool": "x"}`, ErrCorrupt, "no schema_version"},
		{"newer version", `{"schema_version": 2, "tool": "x"}`, ErrSchemaVersion, "schema_version 2, this lockbench reads 1"},
		{"older version", `{"schema_version": 0}`, ErrSchemaVersion, "schema_version 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if tt.content != "" {
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
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("err = %q, want it to mention %q", err, tt.mention)
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
		want    Latency
		wantErr bool
	}{
		{"empty", nil, Latency{}, false},
		{"one", []float64{7}, Latency{P50: 7, P90: 7, P99: 7, Max: 7, Samples: 1}, false},
		// Linear interpolation: rank = p/100·(n−1) over 1..100.
		{"1..100", oneTo100, Latency{P50: 50.5, P90: 90.1, P99: 99.01, Max: 100, Samples: 100}, false},
		{"two", []float64{10, 20}, Latency{P50: 15, P90: 19, P99: 19.9, Max: 20, Samples: 2}, false},
		{"NaN", []float64{1, math.NaN()}, Latency{}, true},
		{"negative", []float64{1, -1}, Latency{}, true},
		{"infinite", []float64{math.Inf(1)}, Latency{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Percentiles(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			const eps = 1e-9
			if math.Abs(got.P50-tt.want.P50) > eps || math.Abs(got.P90-tt.want.P90) > eps ||
				math.Abs(got.P99-tt.want.P99) > eps || got.Max != tt.want.Max || got.Samples != tt.want.Samples {
				t.Errorf("Percentiles = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{3}, Spread{3, 3, 3, 1}},
		{[]float64{5, 1, 3}, Spread{3, 1, 5, 3}},
		{[]float64{4, 1, 2, 10}, Spread{3, 1, 10, 4}},
		{[]float64{math.NaN(), 2}, Spread{2, 2, 2, 1}},
	}
	for _, tt := range tests {
		if got := SpreadOf(tt.in); got != tt.want {
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
	if want := (Spread{Median: 1000, Min: 900, Max: 1200, N: 3}); tl.ThroughputPerS != want {
		t.Errorf("throughput = %+v, want %+v", tl.ThroughputPerS, want)
	}
	if want := (Spread{Median: 10, Min: 9, Max: 12, N: 3}); tl.P99Ms != want {
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
