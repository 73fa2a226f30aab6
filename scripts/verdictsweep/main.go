// Command verdictsweep writes the verdicts-sweep table (the verdict table
// checked at three time scales) into docs/verdicts.md from the
// results.json files of one or more verdicts-sweep benches (make
// verdicts-sweep runs the profile scenario by scenario, one folder each).
// Exit codes: 0 written, 2 bad arguments, 3 unreadable results or doc.
//
// With -keep, a row of the doc's current table that none of the results
// measured keeps its line (the table says how many and from which
// measurement); without it such a row is listed as not measured.
//
// Usage: go run ./scripts/verdictsweep [-doc docs/verdicts.md] [-keep] RESULTS.json...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweeptable"
)

func main() {
	doc := flag.String("doc", "docs/verdicts.md", "the Markdown file whose verdicts-sweep table is rewritten")
	keep := flag.Bool("keep", false, "keep the current table's line for every row the results given do not measure")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "verdictsweep: name the results.json files of verdicts-sweep benches (lockbench bench --profile verdicts-sweep)")
		os.Exit(2)
	}
	var files []*results.File
	for _, p := range flag.Args() {
		f, err := results.Load(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "verdictsweep:", err)
			os.Exit(3)
		}
		if f.Profile != "verdicts-sweep" {
			fmt.Fprintf(os.Stderr, "verdictsweep: %s: profile %q, want verdicts-sweep\n", p, f.Profile)
			os.Exit(2)
		}
		files = append(files, f)
	}
	old, err := os.ReadFile(*doc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdictsweep:", err)
		os.Exit(3)
	}
	var kept map[[2]string]string
	var keptFrom string
	if *keep {
		kept, keptFrom = sweeptable.Rows(string(old))
	}
	table, err := sweeptable.Table(bench.VerdictsSweepProfile(), files, kept, keptFrom)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdictsweep:", err)
		os.Exit(3)
	}
	if err := os.WriteFile(*doc, []byte(sweeptable.Doc(string(old), table)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "verdictsweep:", err)
		os.Exit(3)
	}
	fmt.Printf("verdictsweep: wrote the table of %d results files into %s\n", len(files), *doc)
}
