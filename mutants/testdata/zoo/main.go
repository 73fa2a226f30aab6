// Command zoo runs the mutation zoo (mutants.Zoo): every mutant's killing
// cells, seed by seed, for the mutant and for its twin (the unmutated
// lock), through lockbench's CLI, and prints the mutation table, ending
// with the line "mutants: K of N killed". `make mutants` runs it.
//
//	go run ./mutants/testdata/zoo --lockbench bin/lockbench --adapter bin/lockbench-mutant
//
// It exits 1 when a cell that should kill its mutant today (no Awaits)
// did not, 4 when such a cell's runs ended without a verdict after their
// retries (exit 3 or 4: a busy machine, too little evidence), 0
// otherwise: a cell that awaits a fault or checker lockbench lacks is
// reported, a finding, and does not fail the run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/mutants"
)

func main() {
	var p mutants.Programs
	flag.StringVar(&p.Lockbench, "lockbench", "bin/lockbench", "the lockbench binary")
	flag.StringVar(&p.Adapter, "adapter", "bin/lockbench-mutant", "the zoo's adapter binary (go build -o bin/lockbench-mutant ./mutants/testdata/adapter)")
	py := flag.String("python", "/usr/bin/python3 mutants/testdata/pyadapter/adapter.py", "the command of the zoo's Python adapter (its script path relative to the working folder is made absolute)")
	flag.StringVar(&p.Out, "out", "lockbench-out/mutants", "results folder (one folder per run)")
	only := flag.String("only", "", "comma-separated mutants to run (default: all)")
	ready := flag.Bool("ready", false, "run only the cells that kill with what lockbench has (no Awaits)")
	seeds := flag.Int("seeds", 0, "run each cell with seeds 1..N instead of the table's (0: the table's)")
	flag.Parse()
	for _, f := range []string{p.Lockbench, p.Adapter} {
		if _, err := os.Stat(f); err != nil {
			fmt.Fprintf(os.Stderr, "zoo: %v (make build; go build -o bin/lockbench-mutant ./mutants/testdata/adapter)\n", err)
			os.Exit(2)
		}
	}
	if f := strings.Fields(*py); len(f) == 2 {
		abs, err := filepath.Abs(f[1])
		if _, serr := os.Stat(abs); err != nil || serr != nil {
			fmt.Fprintf(os.Stderr, "zoo: the Python adapter %s: not found (run from the repository's root or give --python)\n", f[1])
			os.Exit(2)
		}
		*py = f[0] + " '" + abs + "'" // quoted: lockbench splits the command as a shell would
	}
	p.Python = *py
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var names []string
	if *only != "" {
		names = strings.Split(*only, ",")
	}
	start := time.Now()
	var results []mutants.Result
	regressed, undecided := false, false
	for _, m := range mutants.Zoo {
		if names != nil && !slices.Contains(names, m.Name) {
			continue
		}
		r := mutants.Result{Mutant: m}
		for _, c := range m.Kills {
			if *ready && c.Awaits != "" {
				continue
			}
			if *seeds > 0 {
				c.Seeds = nil
				for i := 1; i <= *seeds; i++ {
					c.Seeds = append(c.Seeds, int64(i))
				}
			}
			cr, err := mutants.RunCell(ctx, p, m, c)
			if err != nil {
				fmt.Fprintln(os.Stderr, "zoo:", err)
				os.Exit(3)
			}
			fmt.Fprintf(os.Stderr, "zoo: %s, %s: %s (%.0fs)\n", m.Name, c, cr.Verdict(), time.Since(start).Seconds())
			r.Cells = append(r.Cells, cr)
		}
		if len(r.Cells) == 0 {
			continue // --ready, and every cell awaits
		}
		for _, c := range r.Cells {
			switch {
			case c.Killed() || c.Cell.Awaits != "":
			case c.Definite():
				regressed = true
			default:
				undecided = true
			}
		}
		results = append(results, r)
	}
	if err := mutants.WriteTable(os.Stdout, results); err != nil {
		fmt.Fprintln(os.Stderr, "zoo:", err)
		os.Exit(3)
	}
	switch {
	case regressed:
		fmt.Fprintln(os.Stderr, "zoo: a cell that kills its mutant with what lockbench has did not: see the table")
		os.Exit(1)
	case undecided:
		fmt.Fprintln(os.Stderr, "zoo: some runs ended without a verdict (exit 3 or 4: a busy machine, too little evidence): rerun on a quieter machine")
		os.Exit(4)
	}
}
