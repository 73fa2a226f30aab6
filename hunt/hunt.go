package hunt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

// Defaults of a hunt.
const (
	// DefaultBudget is a hunt's wall-clock budget.
	DefaultBudget = 10 * time.Minute
	// DefaultSeeds is how many seeds a reproduction is tried with, and
	// DefaultNeed how many of them must fail the check: "3 of 5".
	DefaultSeeds = 5
	DefaultNeed  = 3
)

// Options configure a hunt.
type Options struct {
	// Spec is the base run: the strategy, its workload (clients, keys,
	// TTL, duration, ...), library settings, policy, backend. Its Scenario
	// and Schedule are replaced by each drawn schedule; Seed and OutDir
	// are the hunt's.
	Spec bench.Spec
	// Budget bounds the hunt's wall time: no run starts that the mean run
	// so far would not finish within it (DefaultBudget when 0).
	Budget time.Duration
	// Seed seeds the draw (the same seed draws the same schedules) and the
	// runs (schedule i runs with seed Seed+i-1); 0 is taken as 1.
	Seed int64
	// OutDir is the hunt's folder: hunt.json, report.md, report.html, one
	// schedule file and one results folder per surprise, the runs'
	// histories.
	OutDir string
	// Seeds and Need: a surprise reproduces when Need of Seeds seeds fail
	// its check (DefaultSeeds, DefaultNeed when 0).
	Seeds, Need int
	// Command is the hunt's own command line, for the report.
	Command string
	// RunCommand returns the lockbench run command line that replays a
	// run of a schedule stored in file (the CLI's quoting); nil: the
	// report shows none.
	RunCommand func(s bench.Spec, file string) string
	// StopAfter, when positive, ends the hunt once that many surprises
	// are shrunk and reproduce (0: search until the budget is spent).
	StopAfter int
	// MaxSchedules, when positive, ends the hunt once that many schedules
	// were drawn and run (their surprises shrunk), within the budget: a
	// hunt of a fixed size, as a profile or a test runs it (0: search
	// until the budget is spent).
	MaxSchedules int
	// Primitives, when set, narrows the fault space to these primitives
	// (schedule.PrimitiveNames); nil: every primitive that applies.
	Primitives []string
	// Progress, when set, is told the hunt's state after every run and at
	// each event (a surprise found, shrunk).
	Progress func(Progress)
}

// Progress is a hunt's state for a progress line.
type Progress struct {
	// Schedules drawn and run, Runs made in all (shrinking included),
	// Surprises found.
	Schedules, Runs, Surprises int
	// Left is the budget left.
	Left time.Duration
	// Doing says what runs now.
	Doing string
	// Event, when set, is a line worth printing once (a surprise found,
	// a shrink done).
	Event string
}

// Hunt draws fault schedules for the strategy of o.Spec, runs each, and
// shrinks every surprise to a minimal reproduction, until the budget is
// spent or ctx ends (then the report holds what finished and the error
// is ctx's). It writes the report into o.OutDir (WriteReport) and returns
// it. A surprise is a run's violation of a check its expectation says
// must hold under every fault of its schedule (Classify); one surprise
// is shrunk per check and set of primitives (a class), later ones of the
// class are counted. Errors wrap errs.ErrUsage (bad input) or the
// environment's; a run that could not be carried out is counted, and
// maxRunErrors in a row stop the hunt.
func Hunt(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	base := o.Spec
	base.Scenario, base.Schedule, base.Seed = "baseline", nil, o.Seed
	st, _, _, w, err := base.Resolved()
	if err != nil {
		return nil, err
	}
	info := st.Info()
	have, err := cluster.BackendFeatures(o.Spec.Cluster.Backend, o.Spec.Cluster)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
	}
	sp := SpaceOf(info, have, float64(w.Duration)/float64(w.TTL))
	if sp, err = sp.Only(o.Primitives); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, outdir.OutDirError(o.OutDir, err)
	}
	h := &hunter{o: o, sp: sp, start: time.Now(), ttl: w.TTL,
		rep: newReport(o, sp, w.Clients, w.Keys, w.TTL, w.Duration)}
	h.deadline = h.start.Add(o.Budget)
	shared := bench.NewShared(o.Spec.Cluster)
	defer shared.Stop()
	h.r = &runner{base: o.Spec, shared: shared, memo: map[string]Outcome{}}
	if o.RunCommand != nil {
		h.r.command = func(s bench.Spec) string { return o.RunCommand(s, "SCHEDULE") }
	}
	err = h.search(ctx, Case{Clients: w.Clients, Keys: w.Keys, Duration: w.Duration})
	h.rep.finish(h, err)
	if werr := WriteReport(o.OutDir, h.rep); werr != nil {
		return h.rep, errors.Join(err, werr)
	}
	return h.rep, err
}

// withDefaults fills in the zero fields.
func (o Options) withDefaults() Options {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Seeds <= 0 {
		o.Seeds = DefaultSeeds
	}
	if o.Need <= 0 || o.Need > o.Seeds {
		o.Need = min(DefaultNeed, o.Seeds)
	}
	return o
}

// hunter is one hunt in progress.
type hunter struct {
	o        Options
	sp       Space
	r        *runner
	rep      *Report
	ttl      time.Duration
	start    time.Time
	deadline time.Time
	doing    string
}

// left is the budget left.
func (h *hunter) left() time.Duration { return max(time.Until(h.deadline), 0) }

// spent reports whether a run started now would not end within the
// budget, by the mean run so far (runs reserve of them more when
// reserve > 0: a shrink keeps room for its reproduction's tally).
func (h *hunter) spent(reserve int) bool {
	return h.left() < time.Duration(1+reserve)*h.r.perRun()
}

// tell reports progress, with an event line when event is set.
func (h *hunter) tell(event string) {
	if h.o.Progress == nil {
		return
	}
	h.o.Progress(Progress{Schedules: h.rep.Schedules, Runs: h.r.runs, Surprises: len(h.rep.Surprises), Left: h.left(), Doing: h.doing, Event: event})
}

// search draws and runs schedules until the budget is spent, shrinking
// each surprise of a new class.
func (h *hunter) search(ctx context.Context, work Case) error {
	d := NewDrawer(h.sp, h.o.Seed)
	runs := filepath.Join(h.o.OutDir, "runs")
	for i := int64(0); !h.spent(0); i++ {
		if h.o.MaxSchedules > 0 && int(i) >= h.o.MaxSchedules {
			h.rep.stoppedAt = h.o.MaxSchedules
			return nil
		}
		c := work
		c.Schedule = d.Next("d")
		h.doing = fmt.Sprintf("schedule %s: %s", c.Schedule.Name, c.Schedule)
		h.tell("")
		out, err := h.r.run(ctx, c, h.o.Seed+i, runs)
		if err != nil {
			return err
		}
		h.rep.record(c.Schedule, out)
		if !out.Surprised() {
			continue
		}
		class := classOf(out.Surprise[0], c.Schedule)
		if s := h.rep.alike(out.Surprise[0], c.Schedule, class); s != nil {
			s.SeenAgain++
			continue
		}
		h.tell(fmt.Sprintf("surprise %d: %s must hold under %s but was violated (schedule %s, seed %d): shrinking", len(h.rep.Surprises)+1, out.Surprise[0], c.Schedule, c.Schedule.Name, out.Seed))
		s, err := h.shrink(ctx, c, out, class)
		switch {
		case s != nil && s.NotShrunk:
			h.rep.Surprises = append(h.rep.Surprises, *s)
			h.tell(fmt.Sprintf("surprise %d did not reproduce (%s seeds): a one-off, not shrunk; its run: %s", s.N, s.Tally, out.History))
		case s != nil:
			h.rep.Surprises = append(h.rep.Surprises, *s)
			h.tell(fmt.Sprintf("surprise %d shrunk to %s: %s reproduced in %s seeds; replay: %s", s.N, s.Minimal, s.Check, s.Tally, s.Command))
		}
		if err != nil {
			return err
		}
		if h.o.StopAfter > 0 && h.rep.reproduced() >= h.o.StopAfter {
			h.rep.stoppedAfter = h.o.StopAfter
			return nil
		}
	}
	return nil
}

// classOf is a surprise's class: its check and the primitives of its
// schedule, e.g. "reentrancy | lost-reply".
func classOf(check string, s schedule.Schedule) string {
	fs := s.Faults()
	sort.Strings(fs)
	if len(fs) == 0 {
		fs = []string{"no fault"}
	}
	return check + " | " + strings.Join(fs, "+")
}

// shrink shrinks the surprise out of case c to a minimal case that still
// fails its check in Need of Seeds seeds, writes its schedule file and
// results folder, and returns it (nil only when ctx ended first).
func (h *hunter) shrink(ctx context.Context, c Case, out Outcome, class string) (*Surprise, error) {
	n := len(h.rep.Surprises) + 1
	check := out.Surprise[0]
	seeds := make([]int64, h.o.Seeds)
	for i := range seeds {
		seeds[i] = out.Seed + int64(i)
	}
	dir := filepath.Join(h.o.OutDir, fmt.Sprintf("shrink-%d", n))
	folders := map[string]string{} // case → its folder
	folder := func(c Case) string {
		k := key(c, 0)
		if f, ok := folders[k]; ok {
			return f
		}
		f := filepath.Join(dir, fmt.Sprintf("c%d", len(folders)))
		folders[k] = f
		return f
	}
	var stopErr error
	test := func(c Case, mode int) (Tally, bool) {
		t, ok, err := reproduce(seeds, h.o.Need, mode, func(seed int64) (bool, error) {
			o, err := h.r.run(ctx, c, seed, folder(c))
			h.tell("")
			return o.Fails(check), err
		})
		if err != nil && stopErr == nil {
			stopErr = err
		}
		return t, ok && err == nil
	}
	minClients := 1
	if check == "exclusion" || check == "resource" {
		minClients = 2 // one client cannot overlap itself nor lose another's update
	}
	limits := Limits{MinClients: minClients, TTL: h.runTTL(c)}
	// A surprise that does not reproduce in Need of Seeds seeds (a run the
	// machine stalled, a one-off race) is not shrunk: its tally says so.
	h.doing = fmt.Sprintf("surprise %d: does it reproduce? %s", n, c)
	if _, ok := test(c, untilKnown); !ok {
		tally, ok := test(c, allSeeds)
		if ctx.Err() != nil && tally.Tried == 0 {
			return nil, ctx.Err()
		}
		s := &Surprise{N: n, Check: check, Class: class, Found: c.Schedule.Name, FoundSeed: out.Seed, FoundCase: c,
			Minimal: c, Tally: tally, Reproduces: ok, Expectation: out.run.Reason, NotShrunk: true}
		s.Witness = witnessLines(out.run, check, 3)
		s.Unexpected = firstWith(out.run.Unexpected, check)
		if err := h.keep(s, folder(c), check); err != nil && stopErr == nil {
			stopErr = err
		}
		return s, stopErr
	}
	cand := 0
	sh := Shrink(c,
		func(c Case) []Candidate { return Candidates(c, limits) },
		func(next Case) bool {
			cand++
			h.doing = fmt.Sprintf("shrinking surprise %d, candidate %d: %s", n, cand, next)
			_, ok := test(next, quickReject)
			return ok
		},
		func() bool { return stopErr != nil || h.spent(h.o.Seeds) })
	h.doing = fmt.Sprintf("surprise %d: %s seeds of the minimal case", n, fmt.Sprint(h.o.Seeds))
	tally, ok := test(sh.Case, allSeeds)
	if ctx.Err() != nil && tally.Tried == 0 {
		return nil, ctx.Err()
	}
	s := &Surprise{N: n, Check: check, Class: class, Found: c.Schedule.Name, FoundSeed: out.Seed, FoundCase: c,
		Minimal: sh.Case, Shrunk: sh.Taken, ShrinkStopped: sh.Stopped, Candidates: sh.Tried, Tally: tally, Reproduces: ok,
		Expectation: out.run.Reason}
	if err := h.keep(s, folder(sh.Case), check); err != nil && stopErr == nil {
		stopErr = err
	}
	return s, stopErr
}

// runTTL is the TTL a run of c uses (the schedule's floor applied).
func (h *hunter) runTTL(c Case) time.Duration {
	_, _, _, w, err := h.r.spec(c, h.o.Seed, h.o.OutDir).Resolved()
	if err != nil {
		return h.ttl
	}
	return w.TTL
}

// keep writes surprise s: its schedule file (surprise-N.schedule.json),
// its reproduction runs as a results folder (surprise-N/, from the
// minimal case's folder, with report and timelines), the replay command,
// the witness of the first run that failed the check.
func (h *hunter) keep(s *Surprise, from, check string) error {
	var runs []results.Run
	for _, seed := range s.Tally.Seeds {
		if o, ok := h.r.memo[memoKey(s.Minimal, seed, from)]; ok && o.run.Strategy != "" {
			runs = append(runs, o.run)
		}
	}
	sch := s.Minimal.Schedule
	sch.Name = fmt.Sprintf("surprise-%d", s.N)
	sch.From = fmt.Sprintf("%s: schedule %s, seed %d, shrunk (%s)", h.o.Command, s.Found, s.FoundSeed, takenText(s.Shrunk))
	s.Minimal.Schedule = sch
	s.ScheduleFile = sch.Name + ".schedule.json"
	if err := sch.WriteFile(filepath.Join(h.o.OutDir, s.ScheduleFile)); err != nil {
		return outdir.OutDirError(h.o.OutDir, err)
	}
	seed := s.FoundSeed
	for _, r := range runs {
		if Classify(r, from).Fails(check) {
			seed = r.Seed
			s.Witness = witnessLines(r, check, 3)
			s.Unexpected = firstWith(r.Unexpected, check)
			break
		}
	}
	if h.o.RunCommand != nil {
		spec := h.r.spec(s.Minimal, seed, "")
		spec.Command = ""
		s.Command = h.o.RunCommand(spec, filepath.Join(h.o.OutDir, s.ScheduleFile))
	}
	dir := filepath.Join(h.o.OutDir, sch.Name)
	os.RemoveAll(dir)
	if err := os.Rename(from, dir); err != nil {
		return nil // the runs stay where they are; the report says where
	}
	s.Folder = sch.Name
	f := &results.File{SchemaVersion: results.SchemaVersion, Tool: "lockbench " + bench.Version, Commit: bench.Commit(), Profile: "hunt",
		Command: s.Command, Seed: seed, Repeat: len(runs), Started: h.start.UTC().Format(time.RFC3339), Finished: time.Now().UTC().Format(time.RFC3339),
		Config: results.BenchConfig{Strategies: []string{h.o.Spec.Strategy}, Scenarios: []string{sch.Scenario()}},
		Host:   results.ThisHost(), Runs: runs}
	if len(runs) > 0 {
		f.Config.Workload = runs[0].Config
		f.Redis = runs[0].Redis
	}
	if err := figures.Write(dir, f); err != nil {
		return err
	}
	if err := report.Render(dir, f); err != nil {
		return err
	}
	s.Timelines = timelines(dir)
	return nil
}

// firstWith returns the first line that starts with check, else "".
func firstWith(lines []string, check string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, check+" ") {
			return l
		}
	}
	return ""
}

// takenText joins the simplifications a shrink took.
func takenText(taken []string) string {
	if len(taken) == 0 {
		return "nothing smaller failed"
	}
	return strings.Join(taken, ", ")
}

// timelines lists the timeline plots (PNG) report.Render drew in dir,
// relative to dir's parent.
func timelines(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, results.PlotsFolder, "timeline-*.png"))
	slices.Sort(m)
	var out []string
	for _, p := range m {
		if rel, err := filepath.Rel(filepath.Dir(dir), p); err == nil {
			out = append(out, rel)
		}
	}
	return out
}
