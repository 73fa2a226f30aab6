package figures

import (
	"math"
	"reflect"
	"testing"

	"github.com/lockbench/lockbench/internal/resultstest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

func TestSummarize(t *testing.T) {
	f := resultstest.SampleFile()
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
		r    results.Run
		want string
	}{
		{results.Run{Verdict: results.Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok"}}, ObservedHeld},
		{results.Run{Verdict: results.Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok", Fencing: "violated"}}, ObservedViolated},
		{results.Run{Verdict: results.Verdict{Exclusion: "inconclusive", Resource: "violated"}}, ObservedViolated},
		{results.Run{Verdict: results.Verdict{Exclusion: "inconclusive", Resource: "ok"}}, ObservedInconclusive},
		{results.Run{Error: "boom", Verdict: results.Verdict{Exclusion: "violated"}}, ObservedError},
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
	run := func(seed int64, tput, p999, fair float64, grants, lost int) results.Run {
		return results.Run{Strategy: "s", Scenario: "c", Seed: seed, Grants: grants, ThroughputPerS: tput, Fairness: fair,
			AcquireLatencyMs: stats.Latency{P50: 1, P90: 2, P99: 3, P999: p999, Max: 9, Samples: grants},
			Errors:           results.ErrorBreakdown{NotAcquired: 10 * lost, Lost: lost, ExpiredOnRelease: 2 * lost, Info: lost + 1}}
	}
	got := Summarize([]results.Run{run(1, 100, 4, 0.9, 50, 1), run(2, 120, 8, 0.5, 60, 3), run(3, 0, 0, 0, 0, 2)})[0]
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
