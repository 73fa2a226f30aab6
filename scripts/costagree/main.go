// Command costagree sets the like-for-like cost tables (results.json's
// cost_table) of two benches side by side and checks that their counts
// agree: round trips per hold and commands per grant (client and server),
// the figures that survive a busy machine. The time figures (overhead and
// handoff in ms, peak grants/s) are printed with their change but never
// judged: two runs on a shared machine do not agree on them.
//
// Exit codes: 0 every count within -within of the first bench's, 1 a count
// differs by more (each named), 2 bad arguments or unreadable results.
//
// Usage: go run ./scripts/costagree [-within 10%] OLD NEW
// (OLD and NEW: results folders or their results.json, e.g. two runs of
// make bench PROFILE=cost).
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

func main() {
	within := flag.String("within", "10%", "largest relative difference of a count (round trips per hold, commands per grant) that agrees, e.g. 10% or 0.1")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "costagree: name two results folders (or their results.json): go run ./scripts/costagree [-within 10%] OLD NEW")
		os.Exit(2)
	}
	limit, err := parseShare(*within)
	if err != nil {
		fmt.Fprintf(os.Stderr, "costagree: -within %q: %v: give a share such as 10%% or 0.1\n", *within, err)
		os.Exit(2)
	}
	var tables [2][]results.CostRow
	for i, p := range flag.Args() {
		f, _, err := results.LoadPath(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "costagree:", err)
			os.Exit(2)
		}
		tables[i] = f.CostTable
		if len(tables[i]) == 0 {
			tables[i] = figures.CostTableOf(f) // written before results.json carried the table
		}
		if len(tables[i]) == 0 {
			fmt.Fprintf(os.Stderr, "costagree: %s has no cost runs or baseline runs: run make bench PROFILE=cost\n", p)
			os.Exit(2)
		}
	}
	if disagree := write(os.Stdout, tables[0], tables[1], limit); disagree > 0 {
		fmt.Fprintf(os.Stdout, "%d count(s) differ by more than %s\n", disagree, *within)
		os.Exit(1)
	}
}

// parseShare reads "10%" or "0.1" as 0.1; it must lie in (0, 1].
func parseShare(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, err
	}
	if pct {
		v /= 100
	}
	if !(v > 0 && v <= 1) {
		return 0, fmt.Errorf("out of range (0, 100%%]")
	}
	return v, nil
}

// figure is one figure of a cost row: its name, whether it is a count
// (judged) and how to read it from a row (0: not measured).
type figure struct {
	name  string
	count bool
	of    func(results.CostRow) float64
}

var costFigures = []figure{
	{"rtts/hold", true, func(r results.CostRow) float64 { return r.RTTsPerHold.Median }},
	{"client cmds/grant", true, func(r results.CostRow) float64 { return r.ClientCmdsPerGrant }},
	{"server cmds/grant", true, func(r results.CostRow) float64 { return r.ServerCmdsPerGrant }},
	{"overhead p50 ms", false, func(r results.CostRow) float64 { return r.HoldP50Ms.Median }},
	{"handoff p50 ms", false, func(r results.CostRow) float64 { return r.HandoffP50Ms.Median }},
	{"handoff p99 ms", false, func(r results.CostRow) float64 { return r.HandoffP99Ms.Median }},
	{"peak grants/s", false, func(r results.CostRow) float64 { return r.PeakGrantsPerS.Median }},
}

// write prints one Markdown line per strategy and figure of old with its
// value in new and the change, and returns how many counts differ by more
// than limit (relative to old) or were measured on one side only.
func write(w io.Writer, old, new []results.CostRow, limit float64) int {
	fmt.Fprintln(w, "| strategy | figure | old | new | change | judged |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	disagree := 0
	for _, o := range old {
		var n *results.CostRow
		for i := range new {
			if new[i].Strategy == o.Strategy {
				n = &new[i]
			}
		}
		if n == nil {
			fmt.Fprintf(w, "| %s | all | | missing | | DIFFERS |\n", o.Strategy)
			disagree++
			continue
		}
		for _, fg := range costFigures {
			a, b := fg.of(o), fg.of(*n)
			if a == 0 && b == 0 {
				continue
			}
			change, verdict := "", "not judged (time)"
			if a != 0 && b != 0 {
				change = fmt.Sprintf("%+.1f%%", (b-a)/a*100)
			}
			if fg.count {
				verdict = "ok"
				if a == 0 || b == 0 || math.Abs(b-a)/a > limit {
					verdict = "DIFFERS"
					disagree++
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", o.Strategy, fg.name, stats.FormatNum(a), stats.FormatNum(b), change, verdict)
		}
	}
	return disagree
}
