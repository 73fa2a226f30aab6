package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// Render draws the plots of a results file from its runs and their saved
// histories and writes report.md, details.md and index.html into dir
// (WriteReport; the pages link the PNGs in dir/plots). It runs
// offline on saved files, so `lockbench report DIR` re-renders a finished
// bench. Throughput and commands per grant are drawn for every scenario, latency percentiles and CDF for the baseline, the
// throughput-vs-clients plot from f.Sweep when it has runs, the capacity
// plot (results.CapacityPlotName) from f.Cost when a strategy ran at two
// client counts or more, and timelines
// of holders (plots.TimelineKeys, plots.RunTimeline) for one run of each
// pair with a witness or a fault (see timelineRuns), whose violation marks
// are the run's stored witnesses.
func Render(dir string, f *results.File) error {
	sweep := f.Sweep
	pd := filepath.Join(dir, results.PlotsFolder)
	if err := os.MkdirAll(pd, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var refs []PlotRef
	addRef := func(title, name string, ref PlotRef, err error) error {
		if errors.Is(err, plots.ErrNoData) {
			return nil // nothing to draw: leave the plot out
		}
		if err != nil {
			return fmt.Errorf("report: plot %s: %w", name, err)
		}
		ref.Title, ref.PNG, ref.SVG = title, filepath.Join(results.PlotsFolder, name+".png"), filepath.Join(results.PlotsFolder, name+".svg")
		refs = append(refs, ref)
		return nil
	}
	add := func(title, name string, err error) error { return addRef(title, name, PlotRef{}, err) }
	if err := add("Throughput per strategy and scenario (grants/s, with 95% intervals)", "throughput", plots.Throughput(f.Runs, filepath.Join(pd, "throughput"))); err != nil {
		return err
	}
	base := runsOf(f.Runs, "baseline")
	if len(base) > 0 {
		if err := add("Acquire latency percentiles p50, p90, p99, p99.9 and max (baseline, ms, log scale; p50 and p99 with 95% intervals)", "latency-percentiles", plots.LatencyPercentiles(base, filepath.Join(pd, "latency-percentiles"))); err != nil {
			return err
		}
		cdf := map[string][]float64{}
		for _, r := range base {
			_, ops, err := history.Load(filepath.Join(dir, r.History))
			if err != nil {
				continue // a missing history only thins the CDF
			}
			cdf[r.Strategy] = append(cdf[r.Strategy], measure.AcquireLatencies(ops)...)
		}
		if err := add("Acquire latency CDF (baseline, ms, log scale)", "latency-cdf", plots.LatencyCDF(cdf, filepath.Join(pd, "latency-cdf"))); err != nil {
			return err
		}
	}
	if len(sweep) > 0 {
		if err := add("Throughput vs number of clients (baseline, grants/s)", "throughput-vs-clients", plots.ThroughputVsClients(sweepPoints(sweep), filepath.Join(pd, "throughput-vs-clients"))); err != nil {
			return err
		}
	}
	if pts := capacityPoints(figures.CapacityOf(f.Cost)); len(pts) > 0 {
		if err := add("Capacity: grants/s against clients, a key per client (uncontended cost runs)", results.CapacityPlotName, plots.Capacity(pts, filepath.Join(pd, results.CapacityPlotName))); err != nil {
			return err
		}
	}
	if err := add("Commands per grant: sent by the clients (bars, with 95% intervals) and executed by the servers (crosses)", "commands-per-grant", plots.CommandsPerGrant(f.Runs, filepath.Join(pd, "commands-per-grant"))); err != nil {
		return err
	}
	// Timelines: for each pair, its first run with a witness, else its
	// first faulted run; one per key with a witness, or a few keys.
	// Violations are marked from the run's stored witnesses alone.
	for _, r := range timelineRuns(f.Runs) {
		pair := fileSafe(r.Strategy) + "-" + fileSafe(r.Scenario)
		_, ops, err := history.Load(filepath.Join(dir, r.History))
		if err != nil {
			continue
		}
		keys := plots.TimelineKeys(ops, r.Witnesses)
		for _, key := range keys {
			name := "timeline-" + pair
			title := fmt.Sprintf("Holders over time: %s under %s (seed %d)", r.Strategy, r.Scenario, r.Seed)
			ref := PlotRef{Strategy: r.Strategy, Scenario: r.Scenario}
			if len(keys) > 1 {
				name += "-" + fileSafe(key)
				title += ", key " + key
				ref.Key = key
			}
			_, err := plots.RunTimeline(ops, r, key, filepath.Join(pd, name))
			if err := addRef(title, name, ref, err); err != nil {
				return err
			}
		}
	}
	return WriteReport(dir, f, refs)
}

// timelineRuns picks, in order of first appearance, one run per (strategy,
// scenario) pair that completed: its first run with an exclusion or
// resource witness, else its first run with a fault window; pairs with
// neither get no timeline.
func timelineRuns(rs []results.Run) []results.Run {
	var order []string
	pick := map[string]results.Run{}
	witnessed := func(r results.Run) bool { return len(r.Witnesses.Exclusion)+len(r.Witnesses.Resource) > 0 }
	for _, r := range rs {
		if r.Error != "" || !witnessed(r) && len(r.Faults) == 0 {
			continue
		}
		pair := r.Strategy + "-" + r.Scenario
		old, ok := pick[pair]
		if !ok {
			order = append(order, pair)
		}
		if !ok || witnessed(r) && !witnessed(old) {
			pick[pair] = r
		}
	}
	out := make([]results.Run, len(order))
	for i, p := range order {
		out[i] = pick[p]
	}
	return out
}

func runsOf(rs []results.Run, scenario string) []results.Run {
	var out []results.Run
	for _, r := range rs {
		if r.Scenario == scenario {
			out = append(out, r)
		}
	}
	return out
}

// fileSafe turns a key into a file-name part: letters, digits, '-' and '_'
// kept, anything else '_'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// sweepPoints are the client-sweep runs as (clients, grants/s) points per
// strategy: the median over the time windows of the runs with the same
// client count, with its 95% interval when there are enough windows (runs
// without windows: the median of their whole-run throughput).
func sweepPoints(sweep []results.Run) map[string][]plots.XY {
	type k struct {
		strategy string
		clients  int
	}
	runs := map[k][]results.Run{}
	for _, r := range sweep {
		if r.Error == "" {
			runs[k{r.Strategy, r.Config.Clients}] = append(runs[k{r.Strategy, r.Config.Clients}], r)
		}
	}
	pts := map[string][]plots.XY{}
	for key, rs := range runs {
		pt := plots.XY{X: float64(key.clients)}
		if e := stats.EstimateOf(figures.SamplesOf(rs, figures.FigureGrantsPerS)); e.N > 0 {
			pt.Y = e.Median
			if e.Bounded() {
				pt.Low, pt.High = e.Low, e.High
			}
		} else {
			var vs []float64
			for _, r := range rs {
				vs = append(vs, r.ThroughputPerS)
			}
			pt.Y = stats.SpreadOf(vs).Median
		}
		pts[key.strategy] = append(pts[key.strategy], pt)
	}
	for _, v := range pts {
		sort.Slice(v, func(i, j int) bool { return v[i].X < v[j].X })
	}
	return pts
}

// capacityPoints are the capacity curves as (clients, grants/s) points per
// strategy, with each point's 95% interval where it has one; strategies
// with fewer than two client counts are left out (no curve to draw).
func capacityPoints(caps []figures.Capacity) map[string][]plots.XY {
	pts := map[string][]plots.XY{}
	for _, c := range caps {
		if len(c.Points) < 2 {
			continue
		}
		for _, p := range c.Points {
			pt := plots.XY{X: float64(p.Clients), Y: p.GrantsPerS.Median}
			if p.GrantsPerS.Bounded() {
				pt.Low, pt.High = p.GrantsPerS.Low, p.GrantsPerS.High
			}
			pts[c.Strategy] = append(pts[c.Strategy], pt)
		}
	}
	return pts
}
