package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// Report draws the plots of a results file from its runs and their saved
// histories and writes report.md and index.html into dir. It runs offline on
// saved files, so `lockbench report DIR` re-renders a finished bench. The
// throughput-vs-clients plot is drawn from f.Sweep when it has runs.
func Report(dir string, f *results.File) error {
	sweep := f.Sweep
	pd := filepath.Join(dir, "plots")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var refs []results.PlotRef
	add := func(title, name string, err error) error {
		if errors.Is(err, plots.ErrNoData) {
			return nil // nothing to draw: leave the plot out
		}
		if err != nil {
			return fmt.Errorf("report: plot %s: %w", name, err)
		}
		refs = append(refs, results.PlotRef{Title: title, PNG: filepath.Join("plots", name+".png"), SVG: filepath.Join("plots", name+".svg")})
		return nil
	}
	base := runsOf(f.Runs, "baseline")
	if len(base) > 0 {
		if err := add("Throughput per strategy (baseline, grants/s)", "throughput", plots.Throughput(base, filepath.Join(pd, "throughput"))); err != nil {
			return err
		}
		if err := add("Acquire latency percentiles (baseline, ms, log scale)", "latency-percentiles", plots.LatencyPercentiles(base, filepath.Join(pd, "latency-percentiles"))); err != nil {
			return err
		}
		if err := add("Redis commands per grant (baseline)", "round-trips", plots.RoundTrips(base, filepath.Join(pd, "round-trips"))); err != nil {
			return err
		}
		cdf := map[string][]float64{}
		for _, r := range base {
			_, ops, err := history.Load(filepath.Join(dir, r.History))
			if err != nil {
				continue // a missing history only thins the CDF
			}
			cdf[r.Strategy] = append(cdf[r.Strategy], AcquireLatencies(ops)...)
		}
		if err := add("Acquire latency CDF (baseline, ms)", "latency-cdf", plots.LatencyCDF(cdf, filepath.Join(pd, "latency-cdf"))); err != nil {
			return err
		}
	}
	if len(sweep) > 0 {
		pts := map[string][]plots.XY{}
		for _, r := range sweep {
			pts[r.Strategy] = append(pts[r.Strategy], plots.XY{X: float64(r.Config.Clients), Y: r.ThroughputPerS})
		}
		for _, v := range pts {
			sort.Slice(v, func(i, j int) bool { return v[i].X < v[j].X })
		}
		if err := add("Throughput vs clients (baseline, grants/s)", "throughput-vs-clients", plots.ThroughputVsClients(pts, filepath.Join(pd, "throughput-vs-clients"))); err != nil {
			return err
		}
	}
	// One timeline per faulted pair (first seed), zoomed on the first
	// violation or fault.
	seen := map[string]bool{}
	for _, r := range f.Runs {
		pair := r.Strategy + "-" + r.Scenario
		if seen[pair] || len(r.Faults) == 0 {
			continue
		}
		seen[pair] = true
		_, ops, err := history.Load(filepath.Join(dir, r.History))
		if err != nil {
			continue
		}
		name := "timeline-" + pair
		title := fmt.Sprintf("Holders over time: %s under %s (seed %d)", r.Strategy, r.Scenario, r.Seed)
		if err := add(title, name, Timeline(ops, r, filepath.Join(pd, name))); err != nil {
			return err
		}
	}
	return results.WriteReport(dir, f, refs)
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

// AcquireLatencies returns, per grant in a history, the time from the
// client's first attempt to the grant, in ms (retries included).
func AcquireLatencies(ops []history.Operation) []float64 {
	first := map[int]int64{}
	var out []float64
	for _, op := range ops {
		if op.Kind != history.Acquire || op.Depth > 1 || op.Client < 0 || op.Node != "" {
			continue
		}
		t, ok := first[op.Client]
		if !ok {
			t = op.Invoke
		}
		if op.Result == history.OK {
			out = append(out, float64(op.Complete-t)/1e6)
			delete(first, op.Client)
		} else {
			first[op.Client] = t
		}
	}
	return out
}

// Timeline draws the holders of the run's most interesting key around its
// first violation (or first fault): ±3 TTL.
func Timeline(ops []history.Operation, r results.Run, prefix string) error {
	holds := checker.Holds(ops)
	ttl := r.Config.TTLMs
	if ttl <= 0 {
		ttl = 100
	}
	center := r.Faults[0].StartMs
	key := ""
	for _, op := range ops {
		if op.Kind == history.Nemesis || op.Key == "" {
			continue
		}
		key = op.Key
		break
	}
	lo, hi := center-3*ttl, center+3*ttl+(r.Faults[0].EndMs-r.Faults[0].StartMs)
	var iv []plots.Interval
	var viol []float64
	var maxEnd int64 = -1
	for _, h := range holds { // sorted by acquire invoke; overlap = granted before an earlier hold's end of use
		if h.Key != key {
			continue
		}
		if maxEnd >= 0 && h.AcquireComplete < maxEnd {
			if t := float64(h.AcquireComplete) / 1e6; t >= lo && t <= hi {
				viol = append(viol, t)
			}
		}
		if h.EndOfUse > maxEnd {
			maxEnd = h.EndOfUse
		}
	}
	for _, h := range holds {
		s, e := float64(h.AcquireComplete)/1e6, float64(h.EndOfUse)/1e6
		if h.Key != key || e < lo || s > hi {
			continue
		}
		iv = append(iv, plots.Interval{Client: h.Client, StartMs: s, EndMs: e})
	}
	var ws []plots.Window
	for _, fl := range r.Faults {
		if fl.EndMs >= lo && fl.StartMs <= hi {
			ws = append(ws, plots.Window{Name: fl.Name, StartMs: fl.StartMs, EndMs: fl.EndMs})
		}
	}
	return plots.Timeline(key, iv, ws, viol, prefix, &plots.TimelineOptions{Title: fmt.Sprintf("%s under %s (seed %d): holders of %s", r.Strategy, r.Scenario, r.Seed, key), FromMs: lo, ToMs: hi})
}
