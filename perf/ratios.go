package perf

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/synth"
	"github.com/lockbench/lockbench/stats"
	"github.com/lockbench/lockbench/validate"
)

// Targets of the three ratios (docs/performance.md, "Targets").
const (
	// TargetCheckerOpsPerS is the least `lockbench check` must get through
	// per second (load and every check): a million operations in 3 s.
	TargetCheckerOpsPerS = 333_000
	// TargetCheckerPeakBytes is the most memory (peak RSS) checking a
	// million operations may take.
	TargetCheckerPeakBytes = 1 << 30
	// TargetClientCPURatio is the most client CPU per command lockbench
	// (recording) may spend, as a multiple of the bare go-redis loop's.
	TargetClientCPURatio = 1.10
	// TargetRecordingCPU is the most recording may add to lockbench's
	// client CPU per command (a share).
	TargetRecordingCPU = 0.05
)

// DefaultCheckerOps is the size of the generated history the checker is
// measured on (Options.CheckerOps).
const DefaultCheckerOps = 1_000_000

// Ratios are lockbench's three figures of its own cost against their
// targets, each the median with its 95% interval over rounds
// (stats.Estimate: benchstat's distribution-free interval, which needs
// 6 rounds or more). The client figures are ratios within each round, so
// a machine whose load drifts between rounds moves both sides alike;
// being CPU per command, not rates, they hardly move with other load.
type Ratios struct {
	// Clients is the client count of the comparison the client figures
	// come from (the largest; 0: none ran).
	Clients int
	// ClientCPU is, per round, lockbench's client CPU per command
	// (recording) over the bare go-redis loop's: target ≤ TargetClientCPURatio.
	ClientCPU stats.Estimate
	// RecordingCPU is, per round, lockbench's client CPU per command with
	// recording over without, minus 1: target ≤ TargetRecordingCPU.
	RecordingCPU stats.Estimate
	// Checker is the checker's measurement (nil: not measured).
	Checker *CheckerMeasure
}

// CheckerMeasure is `lockbench check` (history.Load and
// validate.CheckHistory) timed on a generated history: synth.Generate's
// correct lock on 50 keys by 50 clients with 10 planted overlaps and lost
// updates, Ops operations, checked Rounds times in this process.
type CheckerMeasure struct {
	Ops int
	// OpsPerCPUS is operations per second of this process's CPU time
	// (user + system): what the wall figure is with an idle core, and
	// nearly unmoved by other load. Target ≥ TargetCheckerOpsPerS.
	OpsPerCPUS stats.Estimate
	// OpsPerS is operations per second of wall time: on a busy machine
	// below OpsPerCPUS (other processes take the cores), on an idle
	// multi-core machine above it (loading runs on every core).
	OpsPerS stats.Estimate
	// PeakRSSBytes is the process's largest peak resident set over the
	// rounds (VmHWM, reset before each; 0 if unknown). Target ≤
	// TargetCheckerPeakBytes.
	PeakRSSBytes uint64
	// CPUS and WallS are every round's CPU and wall seconds.
	CPUS, WallS []float64
}

// clientRatios computes the client figures of r from its comparison with
// the most clients.
func (r *Report) clientRatios() {
	var c *Comparison
	for i := range r.Comparisons {
		if c == nil || r.Comparisons[i].Clients > c.Clients {
			c = &r.Comparisons[i]
		}
	}
	if c == nil {
		return
	}
	r.Ratios.Clients = c.Clients
	var cpu, rec []float64
	for _, rd := range c.Rounds {
		lb, un, loop := rd[1].CPUPerCmd(), rd[2].CPUPerCmd(), rd[3].CPUPerCmd()
		if lb > 0 && loop > 0 {
			cpu = append(cpu, lb/loop)
		}
		if lb > 0 && un > 0 {
			rec = append(rec, lb/un-1)
		}
	}
	r.Ratios.ClientCPU, r.Ratios.RecordingCPU = stats.EstimateOf(cpu), stats.EstimateOf(rec)
}

// measureChecker generates the checker's history into a temporary folder
// and checks it rounds times. Errors: the file system, a verdict other
// than the planted one, ctx's error.
func measureChecker(ctx context.Context, ops, rounds int, logf func(string, ...any)) (*CheckerMeasure, error) {
	dir, err := os.MkdirTemp("", "lockbench-perf-checker-")
	if err != nil {
		return nil, fmt.Errorf("perf: checker: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "synthetic.jsonl")
	h, gen, planted := synth.Generate(synth.Spec{Ops: ops, Keys: 50, Clients: 50, Plants: 10, Seed: 1})
	if err := synth.Write(path, h, gen); err != nil {
		return nil, fmt.Errorf("perf: checker: %w", err)
	}
	m := &CheckerMeasure{Ops: len(gen)}
	gen = nil
	var perCPU, perWall []float64
	for round := range rounds {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		logf("perf: checker on %d operations, round %d/%d", m.Ops, round+1, rounds)
		runtime.GC()
		rss := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
		c0, t0 := selfCPU(), time.Now()
		h, hist, err := history.Load(path)
		if err != nil {
			return m, fmt.Errorf("perf: checker: %w", err)
		}
		run, _, _, err := validate.CheckHistory(path, h, hist, checker.Options{Timeout: time.Minute})
		if err != nil {
			return m, fmt.Errorf("perf: checker: %w", err)
		}
		cpu, wall := selfCPU()-c0, time.Since(t0)
		if run.Verdict.Exclusion != checker.Violated || run.Violations != 2*planted {
			return m, fmt.Errorf("perf: checker: exclusion %s with %d violations on the generated history, want violated with %d (overlaps and lost updates planted)", run.Verdict.Exclusion, run.Violations, 2*planted)
		}
		if rss {
			m.PeakRSSBytes = max(m.PeakRSSBytes, peakRSS())
		}
		m.CPUS, m.WallS = append(m.CPUS, cpu.Seconds()), append(m.WallS, wall.Seconds())
		perCPU = append(perCPU, float64(len(hist))/cpu.Seconds())
		perWall = append(perWall, float64(len(hist))/wall.Seconds())
	}
	m.OpsPerCPUS, m.OpsPerS = stats.EstimateOf(perCPU), stats.EstimateOf(perWall)
	return m, nil
}

// peakRSS reads this process's peak resident set in bytes (VmHWM; 0 if
// unknown).
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			if f := bytes.Fields(v); len(f) > 0 {
				kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// printRatios writes the three ratios against their targets.
func (r Report) printRatios(w interface{ Write([]byte) (int, error) }) {
	fmt.Fprintln(w, "targets (docs/performance.md): median [95% interval] (n=rounds)")
	if c := r.Ratios.Checker; c != nil {
		fmt.Fprintf(w, "  checker:   %s ops per CPU-second (load + every check of lockbench check, %d operations; wall: %s ops/s), target ≥ %dk: %s; peak RSS %.0f MB, target ≤ %d MB: %s\n",
			est(c.OpsPerCPUS, 1e-3, "k"), c.Ops, est(c.OpsPerS, 1e-3, "k"), TargetCheckerOpsPerS/1000, interval(c.OpsPerCPUS, func(v float64) bool { return v >= TargetCheckerOpsPerS }),
			float64(c.PeakRSSBytes)/(1<<20), TargetCheckerPeakBytes>>20, verdict(c.PeakRSSBytes <= TargetCheckerPeakBytes))
	}
	if r.Ratios.Clients > 0 {
		fmt.Fprintf(w, "  client CPU per command, lockbench (recording) / go-redis loop, %d clients: %s, target ≤ %.2f×: %s\n",
			r.Ratios.Clients, est(r.Ratios.ClientCPU, 1, "×"), TargetClientCPURatio, interval(r.Ratios.ClientCPU, func(v float64) bool { return v <= TargetClientCPURatio }))
		fmt.Fprintf(w, "  recording cost, client CPU per command recorded / unrecorded − 1, %d clients: %s, target ≤ %.0f%%: %s\n",
			r.Ratios.Clients, est(r.Ratios.RecordingCPU, 100, "%"), TargetRecordingCPU*100, interval(r.Ratios.RecordingCPU, func(v float64) bool { return v <= TargetRecordingCPU }))
	}
}

// interval judges an estimate against a target: "met" when the whole
// interval meets it, "MISSED" when none of it does, else "undecided"
// (the median's side is named); without an interval, the median decides
// and the verdict says there is none.
func interval(e stats.Estimate, ok func(float64) bool) string {
	switch {
	case e.N == 0:
		return "not measured"
	case !e.Bounded():
		return verdict(ok(e.Median)) + " (median only: fewer than 6 rounds, no interval)"
	case ok(e.Low) && ok(e.High):
		return "met"
	case !ok(e.Low) && !ok(e.High):
		return "MISSED"
	case ok(e.Median):
		return "undecided (median meets it, the interval straddles the target)"
	}
	return "undecided (median misses it, the interval straddles the target)"
}

// est writes e scaled, with unit: "median [low, high] (n=N)", or the
// median and "no interval" below 6 samples.
func est(e stats.Estimate, scale float64, unit string) string {
	switch {
	case e.N == 0:
		return "—"
	case !e.Bounded():
		return fmt.Sprintf("%.2f%s [no interval: n < %d] (n=%d)", e.Median*scale, unit, stats.MinIntervalSamples, e.N)
	}
	return fmt.Sprintf("%.2f%s [%.2f%s, %.2f%s] (n=%d)", e.Median*scale, unit, e.Low*scale, unit, e.High*scale, unit, e.N)
}
