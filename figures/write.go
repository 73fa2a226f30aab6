package figures

import (
	"fmt"
	"slices"

	"github.com/lockbench/lockbench/internal/atomicfile"
	"github.com/lockbench/lockbench/results"
)

// Write writes the data files of a results folder: f as results.json
// (results.Write) with its like-for-like cost table computed from its runs
// (CostTableOf, so the table always agrees with them), and its cost
// samples as bench.txt (WriteBenchText) when a run has any
// (results.Run.Windows). f itself is not modified. Errors are
// results.Write's and WriteBenchText's.
func Write(dir string, f *results.File) error {
	if f == nil {
		return results.Write(dir, f)
	}
	out := *f
	out.CostTable = CostTableOf(&out)
	if err := results.Write(dir, &out); err != nil {
		return err
	}
	if !hasWindows(&out) {
		return nil // lockbench perf's results: no cost samples
	}
	return WriteBenchText(dir, &out)
}

// hasWindows reports whether a run of f (or of its sweep or cost runs)
// has cost windows.
func hasWindows(f *results.File) bool {
	for _, r := range slices.Concat(f.Runs, f.Sweep, f.Cost) {
		if len(r.Windows) > 0 {
			return true
		}
	}
	return false
}

// writeAtomic writes data to path through a temporary file and a
// rename (atomicfile.Write), so a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("figures: %w", err)
	}
	return nil
}
