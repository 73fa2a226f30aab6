// Command verdictsweep writes the verdicts-sweep table (the verdict table
// checked at three time scales) into docs/verdicts.md from the
// results.json files of one or more verdicts-sweep benches (make
// verdicts-sweep runs the profile scenario by scenario, one folder each).
// Exit codes: 0 written, 2 bad arguments, 3 unreadable results or doc.
//
// Usage: go run ./scripts/verdictsweep [-doc docs/verdicts.md] RESULTS.json...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

func main() {
	doc := flag.String("doc", "docs/verdicts.md", "the Markdown file whose verdicts-sweep table is rewritten")
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
	table, err := bench.VerdictsSweepTable(bench.VerdictsSweepProfile(), files)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdictsweep:", err)
		os.Exit(3)
	}
	old, err := os.ReadFile(*doc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdictsweep:", err)
		os.Exit(3)
	}
	if err := os.WriteFile(*doc, []byte(bench.VerdictsSweepDoc(string(old), table)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "verdictsweep:", err)
		os.Exit(3)
	}
	fmt.Printf("verdictsweep: wrote the table of %d results files into %s\n", len(files), *doc)
}
