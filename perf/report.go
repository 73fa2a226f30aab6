package perf

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
)

// Targets of the harness's own cost (docs/performance.md), as shares.
const (
	// TargetRatioMany is lockbench's minimum command rate as a share of
	// redis-benchmark's with many (50) clients.
	TargetRatioMany = 0.90
	// TargetRatioOne is the same with 1 client (latency-bound).
	TargetRatioOne = 0.80
	// TargetRecordingCost is the largest throughput share recording may cost.
	TargetRecordingCost = 0.05
)

// target returns the ratio target for n clients.
func target(n int) float64 {
	if n == 1 {
		return TargetRatioOne
	}
	return TargetRatioMany
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// Print writes the human summary: per client count the two command rates,
// their ratio and the recording's cost against the targets, then the sweep.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "lockbench perf: redis-server %s on this machine (%d cores), medians of %d round(s), [min–max]\n",
		r.Redis, runtime.NumCPU(), r.rounds())
	fmt.Fprintf(w, "  redis-benchmark rate = requests/s it reports (%s)\n", r.RedisBenchmarkCmd)
	fmt.Fprintf(w, "  lockbench rate       = Redis commands/s the server served (SET NX PX + DEL, INFO commandstats delta), set-nx-px, a key per client, no CS wait\n")
	fmt.Fprintf(w, "  go-redis loop rate   = the same commands from a bare go-redis loop with the same client options (no deadline, history or workload): the ceiling of any go-redis harness here\n")
	if r.ConnCheck {
		fmt.Fprintln(w, "  lockbench clients keep go-redis's per-command connection health check (--conn-check), as bench's runs do")
	} else {
		fmt.Fprintln(w, "  lockbench clients skip go-redis's per-command connection health check (a recvfrom syscall; --conn-check keeps it, as bench's runs do)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "clients\tredis-benchmark cmd/s\tlockbench cmd/s\tratio\ttarget\t\tunrecorded cmd/s\trecording cost\ttarget\t\tserver CPU\tlockbench CPU\tother CPU\t")
	for _, c := range r.Comparisons {
		t := target(c.Clients)
		last := c.Rounds[len(c.Rounds)-1]
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t≥%.0f%%\t%s\t%s\t%s\t≤%.0f%%\t%s\t%.2f\t%.2f\t%.2f\t\n", c.Clients,
			rate(c.RedisBenchmark), rate(c.Lockbench), pct(c.Ratio), t*100, verdict(c.Ratio.Median >= t),
			rate(c.Unrecorded), pct(c.RecordingCost), TargetRecordingCost*100, verdict(c.RecordingCost.Median <= TargetRecordingCost),
			last[1].ServerCPU, last[1].ClientCPU, last[1].OtherCPU)
	}
	tw.Flush()
	fmt.Fprintln(w, "  where the gap to redis-benchmark is: the client library and Go's runtime (go-redis loop / redis-benchmark), then lockbench's own code (lockbench / go-redis loop)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "clients\tgo-redis loop cmd/s\tgo-redis loop / redis-benchmark\tlockbench / go-redis loop\t")
	for _, c := range r.Comparisons {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\n", c.Clients, rate(c.GoRedis), pct(c.LibraryRatio), pct(c.HarnessRatio))
	}
	tw.Flush()
	fmt.Fprintln(w, "  client CPU per command (µs; CPU time / commands, robust to other load): the harness's cost beside redis-benchmark's")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "clients\tredis-benchmark µs/cmd\tgo-redis loop µs/cmd\tlockbench µs/cmd\tunrecorded µs/cmd\tlockbench / redis-benchmark\trecording µs/cmd\t")
	for _, c := range r.Comparisons {
		u := c.ClientUs
		ratio, rec := 0.0, u[1].Median-u[2].Median
		if u[0].Median > 0 {
			ratio = u[1].Median / u[0].Median
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.2f×\t%.1f\t\n", c.Clients, us(u[0]), us(u[3]), us(u[1]), us(u[2]), ratio, rec)
	}
	tw.Flush()
	var others []float64
	for _, c := range r.Comparisons {
		for _, rd := range c.Rounds {
			for _, m := range rd {
				others = append(others, m.OtherCPU)
			}
		}
	}
	if o := stat(others); len(others) > 0 {
		fmt.Fprintf(w, "  other processes used %.2f cores [%.2f–%.2f] of %d during these measurements (/proc/stat): above ~0.3 the figures are noisy\n", o.Median, o.Min, o.Max, runtime.NumCPU())
	}
	for _, c := range r.Comparisons {
		for _, rd := range c.Rounds {
			if rd[1].Check != "" {
				fmt.Fprintf(w, "  check of %s (%d operations): %s in %.2f s\n", rd[1].History, rd[1].Ops, rd[1].Check, rd[1].CheckS)
			}
		}
	}
	r.printRatios(w)
	if len(r.Sweep) == 0 {
		return
	}
	fmt.Fprintln(w, "\nsweep: set-nx-px, spin retry, 5 s op timeout, recorded; CPU in cores: server from INFO cpu, lockbench from getrusage, other = /proc/stat busy minus both")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "keys\tclients\tgrants/s\tcommands/s\tserver CPU\tlockbench CPU\tother CPU\tlimit\t")
	for _, p := range r.Sweep {
		keys := "1"
		if p.Keys == "own" {
			keys = "1/client"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%s\t\n", keys, p.Clients, p.GrantsPerS, p.CommandsPerS, p.ServerCPU, p.ClientCPU, p.OtherCPU, p.Limit)
	}
	tw.Flush()
}

func (r Report) rounds() int {
	if len(r.Comparisons) == 0 {
		return 0
	}
	return len(r.Comparisons[0].Rounds)
}

func rate(s Stat) string {
	return fmt.Sprintf("%.0f [%.0f–%.0f]", s.Median, s.Min, s.Max)
}

func us(s Stat) string {
	return fmt.Sprintf("%.1f [%.1f–%.1f]", s.Median, s.Min, s.Max)
}

func pct(s Stat) string {
	return fmt.Sprintf("%.1f%% [%.1f–%.1f]", s.Median*100, s.Min*100, s.Max*100)
}
