package hunt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/results"
)

// runner runs cases: one bench.Run per (case, seed), as bench runs its
// cells (one at a time, the machine to itself), remembering each
// outcome so that a shrink never runs the same case and seed twice.
type runner struct {
	base   bench.Spec
	shared *bench.Shared
	// command returns the command that replays a case's run (nil: none).
	command func(s bench.Spec) string
	memo    map[string]Outcome
	// runs counts the runs made; wall their total wall time.
	runs int
	wall time.Duration
	// errs counts consecutive runs that could not be carried out.
	errs int
}

// key names a case and seed.
func key(c Case, seed int64) string {
	b, _ := json.Marshal(c)
	return fmt.Sprintf("%s/%d", b, seed)
}

// memoKey names a run: its case and seed in folder dir.
func memoKey(c Case, seed int64, dir string) string { return dir + "\x00" + key(c, seed) }

// spec is the run of c with seed into dir.
func (r *runner) spec(c Case, seed int64, dir string) bench.Spec {
	s := r.base
	sch := c.Schedule
	s.Schedule, s.Scenario = &sch, ""
	s.Workload.Clients, s.Workload.Keys, s.Workload.Duration = c.Clients, c.Keys, c.Duration
	s.Seed, s.OutDir, s.Shared = seed, dir, r.shared
	if r.command != nil {
		s.Command = r.command(s)
	}
	return s
}

// maxRunErrors is how many runs in a row may fail to be carried out
// (a fault left unhealed, an overloaded harness) before the hunt stops.
const maxRunErrors = 3

// run runs c with seed into dir and classifies it. An error means the
// hunt must stop: a usage error, an interrupt (ctx), or maxRunErrors runs
// in a row that could not be carried out; a single such run is an
// Outcome with Error set.
func (r *runner) run(ctx context.Context, c Case, seed int64, dir string) (Outcome, error) {
	k := memoKey(c, seed, dir)
	if o, ok := r.memo[k]; ok {
		return o, nil
	}
	start := time.Now()
	res, err := bench.Run(ctx, r.spec(c, seed, dir))
	r.runs++
	r.wall += time.Since(start)
	switch {
	case ctx.Err() != nil:
		return Outcome{}, ctx.Err()
	case errors.Is(err, errs.ErrUsage):
		return Outcome{}, err
	case err != nil:
		r.errs++
		if r.errs >= maxRunErrors {
			return Outcome{}, fmt.Errorf("%d runs in a row could not be carried out, the last: %w", r.errs, err)
		}
		if res.Error == "" {
			res.Error = err.Error()
		}
		res.Seed = seed
		o := Outcome{Seed: seed, Error: res.Error, run: res}
		r.memo[k] = o
		return o, nil
	}
	r.errs = 0
	o := Classify(res, dir)
	r.memo[k] = o
	return o, nil
}

// perRun is the mean wall time of a run so far (0 before the first).
func (r *runner) perRun() time.Duration {
	if r.runs == 0 {
		return 0
	}
	return r.wall / time.Duration(r.runs)
}

// Tally is how often a case reproduced a check over the seeds tried.
type Tally struct {
	// Reproduced and Tried count the seeds that failed the check and
	// those run.
	Reproduced int `json:"reproduced"`
	Tried      int `json:"tried"`
	// Seeds are the seeds run, in order.
	Seeds []int64 `json:"seeds"`
}

// String is "4 of 5".
func (t Tally) String() string { return fmt.Sprintf("%d of %d", t.Reproduced, t.Tried) }

// Modes of reproduce.
const (
	// untilKnown stops as soon as need is met or out of reach.
	untilKnown = iota
	// quickReject is untilKnown that also stops at a first seed that does
	// not reproduce: a shrink's candidate is dropped at its first miss
	// (cheap; a case that fails in most seeds mostly survives it), and
	// taken only when need seeds reproduce.
	quickReject
	// allSeeds runs every seed: the tally a report shows.
	allSeeds
)

// reproduce runs test on seeds in order, in one of the modes above, and
// reports the tally and whether need seeds reproduced. test's error
// stops it.
func reproduce(seeds []int64, need int, mode int, test func(seed int64) (bool, error)) (Tally, bool, error) {
	var t Tally
	for _, s := range seeds {
		if mode != allSeeds && (t.Reproduced >= need || t.Tried-t.Reproduced > len(seeds)-need) {
			break
		}
		if mode == quickReject && t.Tried == 1 && t.Reproduced == 0 {
			break
		}
		ok, err := test(s)
		if err != nil {
			return t, false, err
		}
		t.Tried++
		t.Seeds = append(t.Seeds, s)
		if ok {
			t.Reproduced++
		}
	}
	return t, t.Reproduced >= need, nil
}

// witnessLines are the witness of check in run r, one line each, at most
// most: the checker's witnesses (overlapping holds, lost updates, wrong
// counts, orphans, ...) as their String shows them.
func witnessLines(r results.Run, check string, most int) []string {
	w := r.Witnesses
	var out []string
	add := func(s fmt.Stringer) {
		if len(out) < most {
			out = append(out, s.String())
		}
	}
	switch check {
	case "exclusion":
		for _, x := range w.Exclusion {
			add(x)
		}
	case "resource":
		for _, x := range w.Resource {
			add(x)
		}
	case "fencing":
		for _, x := range w.Fencing {
			add(x)
		}
	case "reentrancy":
		for _, x := range w.Reentrancy {
			add(x)
		}
	case "liveness":
		for _, x := range w.Liveness {
			add(x)
		}
	case "orphans":
		for _, x := range w.Orphans {
			add(x)
		}
	case "renewal":
		for _, x := range w.Renewal {
			add(x)
		}
	case "lost":
		for _, x := range w.Lost {
			add(x)
		}
	case "extends":
		for _, x := range w.Extends {
			add(x)
		}
	}
	if len(out) == 0 {
		if m := r.Checks[check]; m != "" {
			out = append(out, m)
		}
	}
	return out
}
