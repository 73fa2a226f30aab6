package figures

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/results"
)

func loadHistory(t *testing.T, path string) []history.Operation {
	t.Helper()
	_, ops, err := history.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

func ptr(v float64) *float64 { return &v }

// TestWindowsOfCheckerHistories cuts the checker's recorded histories into
// windows: grants land in the window where they complete, latencies run
// from a client's first attempt after its last grant, the harness's probes
// and the nemesis are outside the span, and the command counter gives each
// window's commands per grant.
func TestWindowsOfCheckerHistories(t *testing.T) {
	dir := filepath.Join("..", "checker", "testdata")
	tests := []struct {
		file    string
		n       int
		counter []results.CounterSample
		want    []results.Window
	}{
		// Client 0 is granted at 1 ms after 1 ms; client 1 fails at 0.5 ms
		// and is granted at 4.5 ms: 4 ms after its first attempt. The span
		// is 0-6.5 ms (the probe at 7 ms is the harness's).
		{"clean-sequential.jsonl", 2, []results.CounterSample{{AtMs: 0, Commands: 0}, {AtMs: 6.5, Commands: 10}}, []results.Window{
			{StartMs: 0, EndMs: 3.25, Grants: 1, GrantsPerS: 1 / 0.00325, AcquireP50Ms: ptr(1), AcquireP99Ms: ptr(1), CommandsPerGrant: ptr(5)},
			{StartMs: 3.25, EndMs: 6.5, Grants: 1, GrantsPerS: 1 / 0.00325, AcquireP50Ms: ptr(4), AcquireP99Ms: ptr(4), CommandsPerGrant: ptr(5)},
		}},
		// Without a counter, no commands per grant; a window without a
		// grant has a rate of 0 and no latency. Client 0's unknown acquire
		// is not a grant: its later failure does not end a wait either.
		{"info-acquire.jsonl", 3, nil, []results.Window{
			{StartMs: 0, EndMs: 3.5 / 3, Grants: 0, GrantsPerS: 0},
			{StartMs: 3.5 / 3, EndMs: 7.0 / 3, Grants: 1, GrantsPerS: 1 / (3.5 / 3 / 1000), AcquireP50Ms: ptr(0.5), AcquireP99Ms: ptr(0.5)},
			{StartMs: 7.0 / 3, EndMs: 3.5, Grants: 0, GrantsPerS: 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := WindowsOf(loadHistory(t, filepath.Join(dir, tt.file)), tt.n, tt.counter)
			if len(got) != len(tt.want) {
				t.Fatalf("%d windows, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if !sameWindow(got[i], tt.want[i]) {
					t.Errorf("window %d = %s, want %s", i, windowText(got[i]), windowText(tt.want[i]))
				}
			}
		})
	}
	if w := WindowsOf(nil, 6, nil); w != nil {
		t.Errorf("no operations: %+v, want nil", w)
	}
}

// sameWindow compares two windows up to rounding (boundaries are whole ns).
func sameWindow(a, b results.Window) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-6*math.Max(1, math.Abs(y)) }
	opt := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || near(*x, *y)) }
	return near(a.StartMs, b.StartMs) && near(a.EndMs, b.EndMs) && a.Grants == b.Grants && near(a.GrantsPerS, b.GrantsPerS) &&
		opt(a.AcquireP50Ms, b.AcquireP50Ms) && opt(a.AcquireP99Ms, b.AcquireP99Ms) && opt(a.CommandsPerGrant, b.CommandsPerGrant)
}

func windowText(w results.Window) string {
	f := func(p *float64) any {
		if p == nil {
			return "absent"
		}
		return *p
	}
	return fmt.Sprintf("[%v, %v] grants %d rate %v p50 %v p99 %v cmds/grant %v", w.StartMs, w.EndMs, w.Grants, w.GrantsPerS, f(w.AcquireP50Ms), f(w.AcquireP99Ms), f(w.CommandsPerGrant))
}

// TestWindowsOfRealRun: the windows a real run stored in results.json are
// what WindowsOf cuts again from its saved history and stored counter (so
// lockbench check and report recompute them), they tile the run, and they
// hold every grant of it.
func TestWindowsOfRealRun(t *testing.T) {
	dir := filepath.Join("testdata", "baseline-run")
	f, err := results.Load(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Runs[0]
	ops := loadHistory(t, filepath.Join(dir, r.History))
	got := WindowsOf(ops, WindowsPerRun, r.CommandCounter)
	if !reflect.DeepEqual(got, r.Windows) {
		t.Fatalf("recomputed windows differ from the stored ones:\n got %+v\nwant %+v", got, r.Windows)
	}
	if !reflect.DeepEqual(CounterAtWindows(ops, WindowsPerRun, r.CommandCounter), r.CommandCounter) {
		t.Error("the stored counter at the window boundaries is not a fixed point of CounterAtWindows")
	}
	grants, width := 0, got[0].EndMs-got[0].StartMs
	for i, w := range got {
		grants += w.Grants
		if i > 0 && w.StartMs != got[i-1].EndMs {
			t.Errorf("window %d starts at %v, the previous ends at %v", i, w.StartMs, got[i-1].EndMs)
		}
		if math.Abs(w.EndMs-w.StartMs-width) > 2e-6 { // whole ns
			t.Errorf("window %d is %v ms wide, window 0 %v ms", i, w.EndMs-w.StartMs, width)
		}
		if w.Grants > 0 && (w.CommandsPerGrant == nil || *w.CommandsPerGrant <= 0 || w.AcquireP99Ms == nil || *w.AcquireP99Ms < *w.AcquireP50Ms) {
			t.Errorf("window %d: %s", i, windowText(w))
		}
	}
	if grants != r.Grants {
		t.Errorf("windows hold %d grants, the run %d", grants, r.Grants)
	}
	if lat := measure.AcquireLatencies(ops); len(lat) != r.Grants || len(lat) != r.AcquireLatencyMs.Samples {
		t.Errorf("%d acquire latencies, %d grants, %d latency samples", len(lat), r.Grants, r.AcquireLatencyMs.Samples)
	}
}

// TestRecomputeWindows: a results folder with its histories gets its
// windows from them; without the history the stored ones stay.
func TestRecomputeWindows(t *testing.T) {
	dir := filepath.Join("testdata", "baseline-run")
	f, err := results.Load(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	edited := *f
	edited.Runs = append([]results.Run(nil), f.Runs...)
	edited.Runs[0].Windows = nil
	got, n := RecomputeWindows(dir, &edited)
	if n != 1 || !reflect.DeepEqual(got.Runs[0].Windows, f.Runs[0].Windows) {
		t.Errorf("recomputed %d runs; windows %+v, want the stored %+v", n, got.Runs[0].Windows, f.Runs[0].Windows)
	}
	if edited.Runs[0].Windows != nil {
		t.Error("RecomputeWindows changed its argument")
	}
	if got, n := RecomputeWindows(t.TempDir(), f); n != 0 || got != f {
		t.Errorf("without histories: %d recomputed, a copy %v; want 0 and f itself", n, got != f)
	}
}

func TestCounterAt(t *testing.T) {
	series := []results.CounterSample{{AtMs: 10, Commands: 100}, {AtMs: 0, Commands: 0}, {AtMs: 20, Commands: 101}} // unsorted on purpose
	tests := []struct {
		at   float64
		want int64
		ok   bool
	}{
		{-5, 0, true}, {0, 0, true}, {5, 50, true}, {10, 100, true}, {14.9, 100, true}, {15, 101, true}, {20, 101, true}, {99, 101, true},
	}
	for _, tt := range tests {
		if got, ok := counterAt(series, tt.at); got != tt.want || ok != tt.ok {
			t.Errorf("counterAt(%v) = %d, %v; want %d, %v", tt.at, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := counterAt(nil, 1); ok {
		t.Error("empty series: ok")
	}
}

// TestSamples: a run's samples per figure come from its windows; a window
// without a grant has a rate of 0 and nothing else; a run that could not
// complete has none.
func TestSamples(t *testing.T) {
	r := results.Run{Windows: []results.Window{
		{GrantsPerS: 10, AcquireP50Ms: ptr(1), AcquireP99Ms: ptr(3), CommandsPerGrant: ptr(11)},
		{GrantsPerS: 0},
		{GrantsPerS: 20, AcquireP50Ms: ptr(2), AcquireP99Ms: ptr(4)},
	}}
	want := map[string][]float64{
		FigureGrantsPerS: {10, 0, 20}, FigureAcquireP50Ms: {1, 2}, FigureAcquireP99Ms: {3, 4}, FigureCommandsPerGrant: {11}, "bogus": nil,
	}
	for fig, w := range want {
		if got := Samples(r, fig); !reflect.DeepEqual(got, w) {
			t.Errorf("Samples(%s) = %v, want %v", fig, got, w)
		}
	}
	if got := SamplesOf([]results.Run{r, r}, FigureCommandsPerGrant); !reflect.DeepEqual(got, []float64{11, 11}) {
		t.Errorf("SamplesOf two runs = %v", got)
	}
	r.Error = "port in use"
	if got := Samples(r, FigureGrantsPerS); got != nil {
		t.Errorf("failed run: %v, want none", got)
	}
}
