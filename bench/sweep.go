package bench

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
	"github.com/lockbench/lockbench/workload"
)

// Scale is one time scale of a profile with Profile.Scales: the TTL its
// cells run at, the duration of each run and how many seeds each cell
// runs.
type Scale struct {
	// TTL is the lock TTL asked of every run at this scale (a scenario
	// that fixes its own TTL runs at that one; the table says so).
	TTL time.Duration
	// Duration is each run's duration (a scenario's minimum raises it).
	Duration time.Duration
	// Seeds is how many seeds each cell runs at this scale (base seed
	// up); --repeat overrides it.
	Seeds int
}

// String is "TTL 100ms".
func (s Scale) String() string { return "TTL " + s.TTL.String() }

// VerdictsSweepProfile is the verdicts-sweep profile: every strategy under
// every scenario at three time scales (runs of 3-20 TTLs: long enough for
// a strike, which pauses or stalls for 2×TTL), one seed a pass, so that the rows of the verdict table are checked at the TTLs
// teams deploy and not only at the fast floor the ci profile uses. Locks
// on etcd and ZooKeeper have a 1 s TTL floor (ConsensusMinTTL) and run at
// 1 s, 5 s and 15 s. Nothing is rerun: an inconclusive cell is part of
// the answer. make verdicts-sweep runs it scenario by scenario and writes
// the table of docs/verdicts.md (VerdictsSweepTable).
func VerdictsSweepProfile() Profile {
	// ci's workload; each scale sets the TTL and duration (these are the
	// first scale's).
	base := workload.Config{Clients: 16, Keys: 1, TTL: 100 * time.Millisecond, Duration: 2 * time.Second, Reentrancy: 3}
	return Profile{Name: "verdicts-sweep",
		Summary:    "every strategy under every scenario at three time scales (Redis TTL 100 ms, 1 s, 5 s; etcd and ZooKeeper 1 s, 5 s, 15 s), runs of 3-20 TTLs, one seed a pass (make verdicts-sweep SWEEP_SEED=N adds a pass), no reruns: the verdict table checked at the TTLs teams deploy (make verdicts-sweep: hours a pass)",
		Strategies: strategies.Names(), Scenarios: chaos.Names(), Seeds: 1, Workload: base, NoRerun: true,
		Scales: []Scale{
			{TTL: 100 * time.Millisecond, Duration: 2 * time.Second, Seeds: 1},
			{TTL: time.Second, Duration: 6 * time.Second, Seeds: 1},
			{TTL: 5 * time.Second, Duration: 15 * time.Second, Seeds: 1},
		},
		ConsensusScales: []Scale{
			{TTL: time.Second, Duration: 8 * time.Second, Seeds: 1},
			{TTL: 5 * time.Second, Duration: 20 * time.Second, Seeds: 1},
			{TTL: 15 * time.Second, Duration: 45 * time.Second, Seeds: 1},
		},
	}
}

// scalesOf returns the scales a profile with Scales runs strategy st at.
func (p Profile) scalesOf(st impl.Strategy) []Scale {
	if st.Info().Server != impl.ServerRedis && len(p.ConsensusScales) > 0 {
		return p.ConsensusScales
	}
	return p.Scales
}

// scaleCells plans a profile with Scales: for each scenario, for each
// scale (in order), the scale's seeds (repeat > 0 overrides them) round-
// robin over the strategies the scenario applies to, each Spec at the
// scale's TTL and duration (the strategy's envelope TTL when that is
// longer, see envelopeWorkload).
func scaleCells(p Profile, seed int64, repeat int) ([]Spec, error) {
	var specs []Spec
	for _, sc := range p.Scenarios {
		scen, err := chaos.Lookup(sc)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
		}
		var applies []impl.Strategy
		for _, name := range p.Strategies {
			st, err := strategies.Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
			}
			if ok, _ := scen.AppliesTo(st.Info()); ok && p.runs(name, sc) {
				applies = append(applies, st)
			}
		}
		for i := range p.Scales {
			seeds := 0
			for _, st := range applies {
				seeds = max(seeds, p.scaleSeeds(st, i, repeat))
			}
			for r := range seeds {
				for _, st := range applies {
					if r >= p.scaleSeeds(st, i, repeat) {
						continue
					}
					scale := p.scalesOf(st)[i]
					w := p.Workload
					w.TTL, w.Duration = scale.TTL, scale.Duration
					// Tagged with the TTL asked: the scales of one
					// (strategy, scenario, seed) keep a history each.
					specs = append(specs, Spec{Strategy: st.Name(), Scenario: sc, Seed: seed + int64(r), Workload: envelopeWorkload(st, w),
						HistoryTag: "ttl" + scale.TTL.String()})
				}
			}
		}
	}
	return specs, nil
}

// scaleSeeds is how many seeds strategy st runs at scale i.
func (p Profile) scaleSeeds(st impl.Strategy, i, repeat int) int {
	if repeat > 0 {
		return repeat
	}
	ss := p.scalesOf(st)
	if i >= len(ss) {
		return 0
	}
	return max(ss[i].Seeds, 1)
}

// The verdicts-sweep table in docs/verdicts.md is delimited by these
// markers; VerdictsSweepDoc rewrites what is between them.
const (
	SweepBegin = "<!-- verdicts-sweep: generated by `make verdicts-sweep` (bench.VerdictsSweepTable); bench/sweep_test.go keeps its format valid -->"
	SweepEnd   = "<!-- /verdicts-sweep -->"
)

// sweepHeader is the table's header: the row's cells, one column per
// scale, and whether an observed class changes with the TTL.
const sweepHeader = "| scenario | strategy | expected | short TTL | middle TTL | long TTL | changes with the TTL |\n|---|---|---|---|---|---|---|\n"

// ttlFlag finds the TTL a run's reproduce command asked for.
var ttlFlag = regexp.MustCompile(`--ttl (\S+)`)

// runScale returns the index of the scale of scales that run r was asked
// to run at: the largest scale TTL at most the TTL its command asks (a
// strategy's envelope may raise the TTL a little, a scenario may fix its
// own), or its config's TTL when the command names none; -1 if none.
func runScale(r results.Run, scales []Scale) int {
	asked := time.Duration(r.Config.TTLMs * float64(time.Millisecond))
	if m := ttlFlag.FindStringSubmatch(r.Command); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil {
			asked = d
		}
	}
	best := -1
	for i, s := range scales {
		if s.TTL <= asked+time.Millisecond/2 {
			best = i
		}
	}
	return best
}

// sweepRun is what the table keeps of one run.
type sweepRun struct {
	seed       int64
	ttl        time.Duration // the TTL the run had
	broke      []string      // checks violated, in check order
	inconcl    bool          // no violation, some check inconclusive
	unexpected bool
	busy       bool
}

// sweepChecks are the checks the table reports, with their short names.
var sweepChecks = []struct{ name, short string }{
	{"exclusion", "excl"}, {"resource", "res"}, {"liveness", "live"}, {"fencing", "fence"}, {"reentrancy", "reent"},
}

// statusOf returns run r's verdict of a check.
func statusOf(v results.Verdict, check string) checker.Status {
	switch check {
	case "exclusion":
		return v.Exclusion
	case "resource":
		return v.Resource
	case "liveness":
		return v.Liveness
	case "fencing":
		return v.Fencing
	}
	return v.Reentrancy
}

func newSweepRun(r results.Run) sweepRun {
	s := sweepRun{seed: r.Seed, ttl: time.Duration(r.Config.TTLMs * float64(time.Millisecond)),
		unexpected: contradicts(r), busy: r.Busy()}
	for _, c := range sweepChecks {
		switch statusOf(r.Verdict, c.name) {
		case checker.Violated:
			s.broke = append(s.broke, c.name)
		case checker.Inconclusive:
			s.inconcl = true
		}
	}
	return s
}

// contradicts reports whether run r contradicts the verdict table's
// current row of its pair (a table regenerated after a row changed judges
// old runs by the new row): a check that must hold was violated, or a
// check that must break held although a fault landed (or the scenario
// has none). A pair without a row contradicts nothing.
func contradicts(r results.Run) bool {
	exp, ok := verdicts.Expected(r.Strategy, r.Scenario)
	if !ok {
		return false
	}
	landed := r.Evidence.Faults == 0 || r.Evidence.FaultsLanded > 0 || r.Evidence.FaultsUnknown() > 0
	for _, c := range []struct {
		want verdicts.Expect
		got  checker.Status
	}{{exp.Exclusion, r.Verdict.Exclusion}, {exp.Resource, r.Verdict.Resource}, {exp.Liveness, r.Verdict.Liveness}, {exp.Fencing, r.Verdict.Fencing}} {
		switch {
		case c.want == verdicts.Hold && c.got == checker.Violated:
			return true
		case c.want == verdicts.Break && c.got == checker.OK && landed:
			return true
		}
	}
	return false
}

// sweepCell summarises the runs of one (strategy, scenario) at one
// scale: "held 3/3", "broke 2/2 (excl 2, res 1)", "held 1/2, broke 1/2
// (excl 1)", with "inconclusive k/n", the TTL the runs had when it is
// not the scale's, "k unexpected", the seeds and "busy k/n".
func sweepCell(scale Scale, runs []sweepRun) string {
	if len(runs) == 0 {
		return "—"
	}
	n := len(runs)
	var held, broke, inconcl, unexpected, busy int
	perCheck := map[string]int{}
	var seeds []int64
	ttls := map[time.Duration]bool{}
	for _, r := range runs {
		seeds = append(seeds, r.seed)
		ttls[r.ttl] = true
		switch {
		case len(r.broke) > 0:
			broke++
			for _, c := range r.broke {
				perCheck[c]++
			}
		case r.inconcl:
			inconcl++
		default:
			held++
		}
		if r.unexpected {
			unexpected++
		}
		if r.busy {
			busy++
		}
	}
	var parts []string
	if held > 0 {
		parts = append(parts, fmt.Sprintf("held %d/%d", held, n))
	}
	if broke > 0 {
		var cs []string
		for _, c := range sweepChecks {
			if k := perCheck[c.name]; k > 0 {
				cs = append(cs, fmt.Sprintf("%s %d", c.short, k))
			}
		}
		parts = append(parts, fmt.Sprintf("broke %d/%d (%s)", broke, n, strings.Join(cs, ", ")))
	}
	if inconcl > 0 {
		parts = append(parts, fmt.Sprintf("inconclusive %d/%d", inconcl, n))
	}
	out := scale.TTL.String() + ": " + strings.Join(parts, ", ")
	var ran []string
	for t := range ttls {
		if t != scale.TTL && t > 0 {
			ran = append(ran, t.String())
		}
	}
	if len(ran) > 0 {
		sort.Strings(ran)
		out += "; ran at " + strings.Join(ran, ", ")
	}
	if unexpected > 0 {
		out += fmt.Sprintf("; %d unexpected", unexpected)
	}
	slices.Sort(seeds)
	out += "; seeds " + seedList(seeds)
	if busy > 0 {
		out += fmt.Sprintf("; busy %d/%d", busy, n)
	}
	return out
}

// seedList writes seeds as ranges: "1-3", "1-2, 5".
func seedList(seeds []int64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", seeds[i], seeds[j]))
		} else {
			parts = append(parts, fmt.Sprint(seeds[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// scaleChange says which checks broke at one scale and held (no
// violation, conclusively) at another: "excl broke at 5s, held at 1s".
// "" when no check did.
func scaleChange(scales []Scale, byScale [][]sweepRun) string {
	var out []string
	for _, c := range sweepChecks {
		var brokeAt, heldAt []string
		for i, runs := range byScale {
			b, h := false, false
			for _, r := range runs {
				if slices.Contains(r.broke, c.name) {
					b = true
				} else if len(r.broke) == 0 && !r.inconcl {
					h = true
				}
			}
			if b {
				brokeAt = append(brokeAt, scales[i].TTL.String())
			}
			if h && !b {
				heldAt = append(heldAt, scales[i].TTL.String())
			}
		}
		if len(brokeAt) > 0 && len(heldAt) > 0 {
			out = append(out, fmt.Sprintf("%s broke at %s, held at %s", c.short, strings.Join(brokeAt, ", "), strings.Join(heldAt, ", ")))
		}
	}
	return strings.Join(out, "; ")
}

// VerdictsSweepTable renders the runs of one or more verdicts-sweep
// benches (files, merged; a later file's run of the same strategy,
// scenario, scale and seed replaces an earlier one's) as the Markdown
// table of docs/verdicts.md, between SweepBegin and SweepEnd: one line
// per (scenario, strategy) row of the verdict table that ran, in the
// matrix's order, with the class observed at each scale, its seeds, and
// the checks whose class changes with the TTL. It errors when no file
// holds a run.
//
// kept holds lines of an earlier table by (scenario, strategy)
// (SweepRows): a row no file measured keeps its earlier line, and the
// text before the table says how many rows were kept and from which
// measurement; nil keeps nothing (rows not measured are listed after the
// table).
func VerdictsSweepTable(p Profile, files []*results.File, kept map[[2]string]string, keptFrom string) (string, error) {
	type key struct {
		strategy, scenario string
		scale              int
		seed               int64
	}
	runs := map[key]sweepRun{}
	var commits, hosts, dates []string
	for _, f := range files {
		for _, r := range f.Runs {
			st, err := strategies.Lookup(r.Strategy)
			if err != nil || r.Error != "" {
				continue
			}
			i := runScale(r, p.scalesOf(st))
			if i < 0 {
				continue
			}
			runs[key{r.Strategy, r.Scenario, i, r.Seed}] = newSweepRun(r)
		}
		if len(f.Runs) > 0 {
			commits = appendNew(commits, f.Commit)
			hosts = appendNew(hosts, fmt.Sprintf("%d cores", f.Host.CPUs))
			dates = appendNew(dates, strings.SplitN(f.Started, "T", 2)[0])
		}
	}
	if len(runs) == 0 {
		return "", errors.New("no verdicts-sweep runs in the results given")
	}
	var b strings.Builder
	b.WriteString(SweepBegin + "\n")
	fmt.Fprintf(&b, "Measured %s (commit %s, %s). Scales: Redis %s; etcd and ZooKeeper %s. A cell: the TTL asked, the runs that held (no check violated), broke (the checks violated, in how many runs) or were inconclusive, the TTL the runs had when a scenario raised it, the runs that contradict the row as it is now (a must-hold check violated, or a must-break check held where a fault landed), the seeds, and the runs measured on a busy machine; — is a scale no run measured.\n\n",
		strings.Join(dates, ", "), strings.Join(commits, ", "), strings.Join(hosts, ", "), scaleNames(p.Scales), scaleNames(p.ConsensusScales))
	var body strings.Builder
	nKept := 0
	// The rows no run measured, by scenario in the matrix's order: named
	// after the table, so that no row reads as checked that was not.
	type notMeasured struct {
		scenario   string
		strategies []string
	}
	var unmeasured []notMeasured
	for _, row := range verdicts.Matrix() {
		st, err := strategies.Lookup(row.Strategy)
		if err != nil {
			continue
		}
		scales := p.scalesOf(st)
		byScale := make([][]sweepRun, len(scales))
		ran := false
		for k, r := range runs {
			if k.strategy == row.Strategy && k.scenario == row.Scenario && k.scale < len(scales) {
				byScale[k.scale] = append(byScale[k.scale], r)
				ran = true
			}
		}
		if !ran && kept[[2]string{row.Scenario, row.Strategy}] != "" {
			body.WriteString(kept[[2]string{row.Scenario, row.Strategy}] + "\n")
			nKept++
			continue
		}
		if !ran {
			if n := len(unmeasured); n == 0 || unmeasured[n-1].scenario != row.Scenario {
				unmeasured = append(unmeasured, notMeasured{scenario: row.Scenario})
			}
			u := &unmeasured[len(unmeasured)-1]
			u.strategies = append(u.strategies, row.Strategy)
			continue
		}
		cells := make([]string, 3)
		for i := range cells {
			cells[i] = "—"
			if i < len(scales) {
				sort.Slice(byScale[i], func(a, c int) bool { return byScale[i][a].seed < byScale[i][c].seed })
				cells[i] = sweepCell(scales[i], byScale[i])
			}
		}
		change := scaleChange(scales, byScale)
		if change == "" {
			change = "no"
		}
		fmt.Fprintf(&body, "| %s | %s | %s | %s | %s | %s | %s |\n", row.Scenario, row.Strategy, row.Summary(), cells[0], cells[1], cells[2], change)
	}
	if nKept > 0 {
		fmt.Fprintf(&b, "%d rows no results file given here measured are kept from the earlier table (%s).\n\n", nKept, keptFrom)
	}
	b.WriteString(sweepHeader)
	b.WriteString(body.String())
	if len(unmeasured) > 0 {
		var parts []string
		rows := 0
		for _, u := range unmeasured {
			parts = append(parts, fmt.Sprintf("%s (%s)", u.scenario, strings.Join(u.strategies, ", ")))
			rows += len(u.strategies)
		}
		fmt.Fprintf(&b, "\nNot measured in these passes (%d rows, no run at any scale): %s.\n", rows, strings.Join(parts, "; "))
	}
	b.WriteString(SweepEnd + "\n")
	return b.String(), nil
}

// SweepRows returns the lines of doc's verdicts-sweep table by
// (scenario, strategy), and the table's "Measured ..." sentence (the
// measurement they come from; text up to the first period, and the
// measurement of rows it had itself kept), so that a
// rewrite can keep the rows its results do not cover (VerdictsSweepTable's
// kept). A doc without the table gives none.
func SweepRows(doc string) (map[[2]string]string, string) {
	i := strings.Index(doc, SweepBegin)
	j := strings.Index(doc, SweepEnd)
	if i < 0 || j < i {
		return nil, ""
	}
	body := doc[i+len(SweepBegin) : j]
	from := ""
	if k := strings.Index(body, "Measured "); k >= 0 {
		from, _, _ = strings.Cut(body[k:], ". ")
		from = strings.TrimSuffix(strings.TrimSpace(from), ".")
	}
	// Rows the table itself kept from a measurement before it.
	if _, rest, ok := strings.Cut(body, "kept from the earlier table ("); ok {
		if earlier, _, ok := strings.Cut(rest, ").\n"); ok {
			from += "; some from " + earlier
		}
	}
	h := strings.Index(body, sweepHeader)
	if h < 0 {
		return nil, from
	}
	rows := map[[2]string]string{}
	table, _, _ := strings.Cut(strings.TrimSpace(body[h+len(sweepHeader):]), "\n\n")
	for _, line := range strings.Split(table, "\n") {
		f := strings.Split(strings.Trim(line, "|"), "|")
		if len(f) != 7 {
			continue
		}
		rows[[2]string{strings.TrimSpace(f[0]), strings.TrimSpace(f[1])}] = line
	}
	return rows, from
}

// appendNew appends s unless it is empty or already in list.
func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// scaleNames is "100ms, 1s, 5s".
func scaleNames(ss []Scale) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.TTL.String())
	}
	return strings.Join(out, ", ")
}

// VerdictsSweepDoc returns doc with the text between SweepBegin and
// SweepEnd (the markers included) replaced by table; without the markers
// the table is appended under a "## The verdict table at three time
// scales" heading.
func VerdictsSweepDoc(doc, table string) string {
	i := strings.Index(doc, SweepBegin)
	j := strings.Index(doc, SweepEnd)
	if i < 0 || j < i {
		return strings.TrimRight(doc, "\n") + "\n\n## The verdict table at three time scales\n\n" + table
	}
	return doc[:i] + table + strings.TrimPrefix(doc[j+len(SweepEnd):], "\n")
}

// sweepCellRE is the format of a table cell: the scale's TTL, the
// classes observed, then optional notes, or "—".
var sweepCellRE = regexp.MustCompile(`^(—|\d+(\.\d+)?(ms|s|m): ((held|broke|inconclusive) \d+/\d+( \([a-z]+ \d+(, [a-z]+ \d+)*\))?)(, (held|broke|inconclusive) \d+/\d+( \([a-z]+ \d+(, [a-z]+ \d+)*\))?)*(; [^|]+)?)$`)

// CheckVerdictsSweepDoc checks the format of the verdicts-sweep table in
// doc (not its measured content): the markers, the header, and for every
// line a scenario and strategy the verdict table has, its expected class,
// and cells of the documented form. It returns every problem found.
func CheckVerdictsSweepDoc(doc string) []error {
	i := strings.Index(doc, SweepBegin)
	j := strings.Index(doc, SweepEnd)
	if i < 0 || j < i {
		return []error{fmt.Errorf("no verdicts-sweep table: the markers %q and %q are missing or out of order", SweepBegin, SweepEnd)}
	}
	body := doc[i+len(SweepBegin) : j]
	h := strings.Index(body, sweepHeader)
	if h < 0 {
		return []error{fmt.Errorf("the verdicts-sweep table has no header %q", sweepHeader)}
	}
	rows := map[[2]string]bool{}
	for _, r := range verdicts.Matrix() {
		rows[[2]string{r.Scenario, r.Strategy}] = true
	}
	var problems []error
	// The table ends at its first empty line; what follows (the rows not
	// measured) is prose.
	table, _, _ := strings.Cut(strings.TrimSpace(body[h+len(sweepHeader):]), "\n\n")
	lines := strings.Split(table, "\n")
	for n, line := range lines {
		if line == "" {
			continue
		}
		f := strings.Split(strings.Trim(line, "|"), "|")
		if len(f) != 7 {
			problems = append(problems, fmt.Errorf("line %d: %d columns, want 7: %q", n+1, len(f), line))
			continue
		}
		for k := range f {
			f[k] = strings.TrimSpace(f[k])
		}
		if !rows[[2]string{f[0], f[1]}] {
			problems = append(problems, fmt.Errorf("line %d: %s × %s is not a row of the verdict table", n+1, f[1], f[0]))
		}
		// The row's class when it was measured: the table keeps it even
		// after a row changes (the change names its evidence).
		if !slices.Contains([]string{"must-hold", "must-break", "at-risk"}, f[2]) {
			problems = append(problems, fmt.Errorf("line %d: expected %q: want must-hold, must-break or at-risk", n+1, f[2]))
		}
		for _, c := range f[3:6] {
			if !sweepCellRE.MatchString(c) {
				problems = append(problems, fmt.Errorf("line %d: cell %q is not of the form \"TTL: held k/n, broke k/n (excl k), inconclusive k/n; notes\"", n+1, c))
			}
		}
	}
	return problems
}
