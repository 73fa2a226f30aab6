package bench

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/validate"
)

// MaxReruns is how many times a bench reruns a cell whose run was
// inconclusive (a gated check lacked evidence: results.Run.Outcome) for
// want of what a rerun can supply (validate.RerunHelps: holds, chances to
// overlap, a fault that lands; not a share of unknown outcomes, which a
// longer run keeps) before it reports it. Why 2: a rerun doubles the
// duration, so the third attempt runs 4× as long as the first and gathers
// about 4× the holds; a strategy still short of evidence then is short for
// a reason a longer run will not fix, which the report names; and two
// reruns of a 1 s ci cell cost ~7 s, which a few cells can spend within
// the ci profile's 3 minutes.
const MaxReruns = 2

// runCell runs the cell s (one of repeat repeats of its pair) and, while
// its run is inconclusive, a rerun can supply what it lacks
// (validate.RerunHelps) and fewer than MaxReruns reruns were made, runs
// it again with the next seed clear of the other repeats' seeds (rerun k
// runs seed s.Seed+k·repeat) and twice the duration of the attempt
// before (the scenario's own minimum applied first). It returns the last
// run, the earlier attempts in its Earlier (oldest first, each with its
// own history file), or the error of the attempt that could not be
// carried out. command gives each rerun its reproduce command line
// (nil: none); progress is told the label of each rerun.
func runCell(ctx context.Context, s Spec, repeat int, command func(Spec) string, progress func(label string)) (results.Run, error) {
	r, err := Run(ctx, s)
	var earlier []results.Run
	for k := 1; err == nil && k <= MaxReruns && r.Outcome() == results.OutcomeInconclusive && validate.RerunHelps(r); k++ {
		_, _, _, w, rerr := s.Resolved()
		if rerr != nil {
			break // Run resolved it already; cannot happen
		}
		next := s
		next.Seed = s.Seed + int64(k)*int64(max(repeat, 1))
		next.Workload.Duration = w.Duration * (1 << k)
		if command != nil {
			next.Command = command(next)
		}
		progress(fmt.Sprintf("%s/%s seed %d (rerun %d of %d: seed %d was inconclusive)", next.Strategy, next.Scenario, next.Seed, k, MaxReruns, r.Seed))
		earlier = append(earlier, r)
		r, err = Run(ctx, next)
	}
	if len(earlier) > 0 {
		r.Earlier = earlier
	}
	return r, err
}
