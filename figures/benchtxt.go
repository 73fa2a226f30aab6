package figures

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/results"
	"golang.org/x/perf/benchfmt"
)

// BenchTextPkg is the "pkg:" configuration line of bench.txt.
const BenchTextPkg = "github.com/lockbench/lockbench"

// BenchName returns the benchmark name (without the "Benchmark" prefix) of
// a run's samples in bench.txt: "Lock/strategy=S/scenario=X/clients=N/ttl=Tms",
// with "/keys=K" appended when the run used K > 1 keys (an uncontended
// cost run: File.Cost),
// keys benchstat can slice by (e.g. benchstat -col /strategy). Runs with
// other clients or another TTL are other benchmarks, so they are never
// pooled. Characters the format does not allow in a name (white space) and
// the key separators "/" and "=" inside a value become "_".
func BenchName(r results.Run) string {
	clean := strings.NewReplacer(" ", "_", "\t", "_", "\n", "_", "/", "_", "=", "_")
	name := fmt.Sprintf("Lock/strategy=%s/scenario=%s/clients=%d/ttl=%sms",
		clean.Replace(r.Strategy), clean.Replace(r.Scenario), r.Config.Clients, strconv.FormatFloat(r.Config.TTLMs, 'f', -1, 64))
	if r.Config.Keys > 1 {
		name += fmt.Sprintf("/keys=%d", r.Config.Keys) // another benchmark than one key's
	}
	return name
}

// benchUnits are the units of the cost figures in bench.txt and whether a
// higher value is better (benchstat's "better" unit metadata).
var benchUnits = []struct {
	unit, better string
}{
	{FigureGrantsPerS, "higher"}, {FigureAcquireP50Ms, "lower"}, {FigureAcquireP99Ms, "lower"}, {FigureCommandsPerGrant, "lower"},
	{FigureHoldP50Ms, "lower"}, {FigureHoldP99Ms, "lower"}, {FigureRTTsPerHold, "lower"}, {FigureHandoffP50Ms, "lower"}, {FigureHandoffP99Ms, "lower"},
}

// MarshalBenchText writes the cost samples of f's runs and client-sweep
// runs in the Go benchmark text format
// (https://go.dev/design/14313-benchmark-format) with
// golang.org/x/perf/benchfmt: configuration lines for the machine (goos,
// goarch, cpu) and pkg, unit metadata saying which direction is better,
// then one line per window of each completed run (Run.Windows): the name
// from BenchName, the window's grants as the iteration count, and its
// grants/s, acquire-p50-ms, acquire-p99-ms, cmds/grant, hold-p50-ms,
// hold-p99-ms, rtts/hold (hold-p50-ms over Run.RoundTripMs),
// handoff-p50-ms and handoff-p99-ms (a figure a window lacks is left off
// its line). Cost runs (File.Cost) are written too. Two files written this way compare
// with `benchstat old/bench.txt new/bench.txt`. The configuration holds
// nothing that differs between two runs on one machine (no commit, no
// time), so benchstat puts both in one table. Machine noise and working
// envelope marks are not in the format: results.json and the report
// carry them.
func MarshalBenchText(f *results.File) ([]byte, error) {
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	goos, goarch, _ := strings.Cut(f.Host.OS, "/")
	cfg := []benchfmt.Config{
		{Key: "goos", Value: []byte(goos), File: true},
		{Key: "goarch", Value: []byte(goarch), File: true},
		{Key: "cpu", Value: []byte(f.Host.CPUModel), File: true},
		{Key: "pkg", Value: []byte(BenchTextPkg), File: true},
	}
	for _, u := range benchUnits {
		m := &benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u.unit, Key: "better"}, OrigUnit: u.unit, Value: u.better}
		if err := w.Write(m); err != nil {
			return nil, fmt.Errorf("results: %s: %w", results.BenchText, err)
		}
	}
	for _, r := range slices.Concat(f.Runs, f.Sweep, f.Cost) {
		if r.Error != "" {
			continue
		}
		name := benchfmt.Name(BenchName(r))
		for _, win := range r.Windows {
			res := &benchfmt.Result{Config: cfg, Name: name, Iters: win.Grants}
			res.Values = append(res.Values, benchfmt.Value{Value: win.GrantsPerS, Unit: FigureGrantsPerS})
			rtts := rttsPerHold(r, win)
			for _, v := range []struct {
				p    *float64
				unit string
			}{{win.AcquireP50Ms, FigureAcquireP50Ms}, {win.AcquireP99Ms, FigureAcquireP99Ms}, {win.CommandsPerGrant, FigureCommandsPerGrant},
				{win.HoldP50Ms, FigureHoldP50Ms}, {win.HoldP99Ms, FigureHoldP99Ms}, {rtts, FigureRTTsPerHold},
				{win.HandoffP50Ms, FigureHandoffP50Ms}, {win.HandoffP99Ms, FigureHandoffP99Ms}} {
				if v.p != nil {
					res.Values = append(res.Values, benchfmt.Value{Value: *v.p, Unit: v.unit})
				}
			}
			if err := w.Write(res); err != nil {
				return nil, fmt.Errorf("results: %s: %w", results.BenchText, err)
			}
		}
	}
	return buf.Bytes(), nil
}

// WriteBenchText writes MarshalBenchText(f) to dir/bench.txt (atomically,
// as Write does).
func WriteBenchText(dir string, f *results.File) error {
	data, err := MarshalBenchText(f)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, results.BenchText), data)
}

// CostCellName names an uncontended cost run's cell (File.Cost):
// "uncontended-N" for N clients each on a key of its own.
func CostCellName(r results.Run) string { return fmt.Sprintf("uncontended-%d", r.Config.Clients) }
