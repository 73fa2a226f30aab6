package hunt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

// redisFeatures are the process backend's features.
func redisFeatures(t *testing.T) []cluster.Feature {
	have, err := cluster.BackendFeatures(cluster.BackendProcess, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return have
}

var (
	reentrant = impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Reentrant: true}}
	watchdog  = impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, Policy: impl.Policy{HonourLost: true}}
	etcd      = impl.Info{Nodes: 3, Server: impl.ServerEtcd, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}}
)

// TestDrawDeterministic: the same seed draws the same schedules, another
// seed others; every schedule passes Check and keeps to its space.
func TestDrawDeterministic(t *testing.T) {
	sp := SpaceOf(reentrant, redisFeatures(t), 10)
	draw := func(seed int64) []schedule.Schedule {
		d := NewDrawer(sp, seed)
		var out []schedule.Schedule
		for range 200 {
			out = append(out, d.Next("d"))
		}
		return out
	}
	a, b, c := draw(7), draw(7), draw(8)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("seed 7 drew different schedules twice")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("seeds 7 and 8 drew the same schedules")
	}
	steps := map[int]int{}
	seen := map[string]bool{}
	for _, s := range a {
		if err := s.Check(); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		steps[len(s.Steps)]++
		for _, st := range s.Steps {
			seen[st.Fault] = true
			if !slices.Contains(sp.Names(), st.Fault) {
				t.Errorf("%s: %s is not in the space", s, st.Fault)
			}
			if st.On != schedule.OnTime && !slices.Contains(sp.Events, st.On) {
				t.Errorf("%s: event %s never comes for the lock", s, st.On)
			}
			if st.At > sp.Span/2 {
				t.Errorf("%s: at %v past half the run (%v TTLs)", s, st.At, sp.Span)
			}
		}
	}
	if steps[1] == 0 || steps[2] == 0 || steps[3] == 0 || steps[0] > 0 {
		t.Errorf("steps per schedule %v: want schedules of 1, 2 and 3 steps", steps)
	}
	for _, p := range sp.Names() {
		if !seen[p] {
			t.Errorf("200 schedules never drew %s", p)
		}
	}
}

// TestSpace: the space follows the lock: no renew event without renewal,
// no proxied faults on etcd, the replication faults left out with why;
// Only narrows it and refuses a primitive left out.
func TestSpace(t *testing.T) {
	have := redisFeatures(t)
	if sp := SpaceOf(reentrant, have, 10); slices.Contains(sp.Events, "renew") {
		t.Errorf("a lock without renewal reaches renew: %v", sp.Events)
	}
	if sp := SpaceOf(watchdog, have, 10); !slices.Contains(sp.Events, "renew") {
		t.Errorf("a renewing lock does not reach renew: %v", sp.Events)
	}
	sp := SpaceOf(etcd, have, 3)
	for _, p := range []string{"lost-reply", "link-cut", "clock-jump"} {
		if slices.Contains(sp.Names(), p) || sp.Left[p] == "" {
			t.Errorf("etcd: %s drawn (%v) or left out without a reason", p, sp.Names())
		}
	}
	if !slices.Contains(sp.Names(), "node-pause") || sp.Left["sentinel-failover"] == "" {
		t.Errorf("etcd space %v, left %v", sp.Names(), sp.Left)
	}
	if got, err := sp.Only([]string{"node-pause"}); err != nil || !slices.Equal(got.Names(), []string{"node-pause"}) {
		t.Errorf("Only(node-pause) = %v, %v", got.Names(), err)
	}
	if _, err := sp.Only([]string{"lost-reply"}); err == nil || !strings.Contains(err.Error(), "left out") {
		t.Errorf("Only(lost-reply) on etcd: %v", err)
	}
}

// TestShrinkSyntheticOracle: the shrinker, on a noisy oracle that fails
// (in 4 of 5 seeds) exactly when a case has a lost reply on a nested
// acquire and a node pause of at least 0.4 TTL, with 3 clients or more,
// ends at those two steps, no delay, the least clients that fail, one
// key, and the shortest run the schedule allows; with a 3-of-5 rule a
// case that does not fail is never taken.
func TestShrinkSyntheticOracle(t *testing.T) {
	start := Case{Clients: 16, Keys: 4, Duration: 10 * time.Second, Schedule: schedule.Schedule{Version: 1, Name: "d-1", Steps: []schedule.Step{
		{Fault: "client-pause", Target: schedule.TargetHolder, On: "before-write", At: 2.5, For: 2.2},
		{Fault: "lost-reply", Target: schedule.TargetHolder, On: "before-acquire", Depth: 2, At: 3.1},
		{Fault: "node-pause", Target: schedule.TargetHolderNode, On: "acquired", With: 2, Delay: 0.3, For: 2.9},
	}}}
	property := func(c Case) bool {
		lost, pause := false, false
		for _, st := range c.Schedule.Steps {
			lost = lost || st.Fault == "lost-reply" && st.Depth == 2
			pause = pause || st.Fault == "node-pause" && st.For >= 0.4
		}
		return lost && pause && c.Clients >= 3
	}
	rng := rand.New(rand.NewPCG(1, 2))
	runs := 0
	fails := func(c Case) bool {
		_, ok, _ := reproduce([]int64{1, 2, 3, 4, 5}, 3, quickReject, func(int64) (bool, error) {
			runs++
			if property(c) {
				return rng.IntN(5) != 0, nil // 4 of 5
			}
			return rng.IntN(20) == 0, nil // a rare false alarm
		})
		return ok
	}
	ttl := 200 * time.Millisecond
	got := Shrink(start, func(c Case) []Candidate { return Candidates(c, Limits{MinClients: 2, TTL: ttl}) }, fails, func() bool { return false })
	m := got.Case
	if len(m.Schedule.Steps) != 2 || m.Schedule.Steps[0].Fault != "lost-reply" || m.Schedule.Steps[1].Fault != "node-pause" {
		t.Fatalf("minimal schedule %s (taken: %v)", m.Schedule, got.Taken)
	}
	p := m.Schedule.Steps[1]
	if p.With != 1 || p.Delay != 0 || p.For < 0.4 || p.For >= 0.8 {
		t.Errorf("node-pause step %+v: want it tied to the lost reply, no delay, a window in [0.4, 0.8) TTLs", p)
	}
	if m.Schedule.Steps[0].At != 0 {
		t.Errorf("the lost reply at %v TTLs, want 0", m.Schedule.Steps[0].At)
	}
	if m.Clients != 4 || m.Keys != 1 || m.Duration != m.Schedule.MinDuration(ttl) {
		t.Errorf("workload %d clients, %d keys, %v: want 4 (half of 4 fails the property), 1, %v", m.Clients, m.Keys, m.Duration, m.Schedule.MinDuration(ttl))
	}
	if got.Stopped || got.Tried < len(got.Taken) {
		t.Errorf("stopped %v, tried %d for %d taken", got.Stopped, got.Tried, len(got.Taken))
	}
	t.Logf("%d candidates, %d oracle runs: %v", got.Tried, runs, got.Taken)

	stopped := Shrink(start, func(c Case) []Candidate { return Candidates(c, Limits{MinClients: 2, TTL: ttl}) }, fails, func() bool { return true })
	if !stopped.Stopped || !reflect.DeepEqual(stopped.Case, start) {
		t.Errorf("a shrink told to stop at once moved to %s", stopped.Case)
	}
}

// TestReproduce: the tally stops as soon as the need is met or out of
// reach (quickReject: also at a first miss), and runs every seed when
// asked.
func TestReproduce(t *testing.T) {
	seeds := []int64{10, 11, 12, 13, 14}
	for _, c := range []struct {
		fails string // per seed: y reproduced
		mode  int
		tried int
		ok    bool
	}{
		{"yyyyy", untilKnown, 3, true},
		{"nnnyy", untilKnown, 3, false},
		{"ynyny", untilKnown, 5, true},
		{"yynnn", untilKnown, 5, false},
		{"yyynn", allSeeds, 5, true},
		{"nyyyy", quickReject, 1, false},
		{"ynyyy", quickReject, 4, true},
	} {
		i := 0
		tl, ok, err := reproduce(seeds, 3, c.mode, func(seed int64) (bool, error) {
			if seed != seeds[i] {
				t.Fatalf("seed %d, want %d", seed, seeds[i])
			}
			i++
			return c.fails[i-1] == 'y', nil
		})
		if err != nil || ok != c.ok || tl.Tried != c.tried || len(tl.Seeds) != c.tried {
			t.Errorf("%s mode %d: %s ok=%v, want %d tried, ok=%v", c.fails, c.mode, tl, ok, c.tried, c.ok)
		}
	}
}

// TestDropStep: a step tied to a dropped one fires at its time, or at
// its anchor's when the dropped step was tied itself.
func TestDropStep(t *testing.T) {
	steps := []schedule.Step{
		{Fault: "node-pause", At: 2},
		{Fault: "slow-cs", With: 1},
		{Fault: "client-pause", With: 2},
		{Fault: "lost-reply", With: 1},
	}
	got := dropStep(steps, 2)
	want := "node-pause at 2 with 0; client-pause at 0 with 1; lost-reply at 0 with 1"
	if s := stepsText(got); s != want {
		t.Errorf("drop 2: %s, want %s", s, want)
	}
	got = dropStep(steps, 1)
	want = "slow-cs at 2 with 0; client-pause at 0 with 1; lost-reply at 2 with 0"
	if s := stepsText(got); s != want {
		t.Errorf("drop 1: %s, want %s", s, want)
	}
}

func stepsText(steps []schedule.Step) string {
	var out []string
	for _, st := range steps {
		out = append(out, fmt.Sprintf("%s at %g with %d", st.Fault, st.At, st.With))
	}
	return strings.Join(out, "; ")
}

// TestClassify: a violated check that had to hold is a surprise; one at
// risk is predicted; the promises (fencing, reentrancy, the contract
// checks orphans, lost and extends) must hold unless the expectation names
// them; renewal liveness only where it is gated.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		name      string
		expect    map[string]string
		verdict   results.Verdict
		surprise  []string
		predicted []string
	}{
		{"hold and promises", map[string]string{"exclusion": "at-risk", "resource": "at-risk", "liveness": "hold"},
			results.Verdict{Exclusion: checker.Violated, Resource: checker.OK, Liveness: checker.Violated, Reentrancy: checker.Violated, Orphans: checker.OK},
			[]string{"liveness", "reentrancy"}, []string{"exclusion"}},
		{"orphans at risk", map[string]string{"orphans": "at-risk"},
			results.Verdict{Orphans: checker.Violated}, nil, []string{"orphans"}},
		{"renewal gated", map[string]string{"renewal": "hold"},
			results.Verdict{Renewal: checker.Violated}, []string{"renewal"}, nil},
		{"renewal not gated", map[string]string{"exclusion": "hold"},
			results.Verdict{Renewal: checker.Violated}, nil, []string{"renewal"}},
		{"lost and extends are promises", map[string]string{"exclusion": "hold"},
			results.Verdict{Lost: checker.Violated, Extends: checker.Violated}, []string{"lost", "extends"}, nil},
		{"nothing violated", map[string]string{"exclusion": "hold"},
			results.Verdict{Exclusion: checker.OK, Fencing: checker.Skipped}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Classify(results.Run{Seed: 3, ExpectedChecks: c.expect, Verdict: c.verdict}, t.TempDir())
			if !slices.Equal(o.Surprise, c.surprise) || !slices.Equal(o.Predicted, c.predicted) {
				t.Errorf("surprise %v, predicted %v; want %v, %v", o.Surprise, o.Predicted, c.surprise, c.predicted)
			}
			if o.Surprised() != (len(c.surprise) > 0) {
				t.Errorf("Surprised() = %v", o.Surprised())
			}
		})
	}
	r := results.Run{Faults: []results.Fault{{Name: "lost-reply (step 2)"}}}
	if o := Classify(r, t.TempDir()); len(o.Fired) != 1 {
		t.Errorf("fired %v: want step 2 from the fault windows when the history cannot be read", o.Fired)
	}
}

// TestCandidates: a case's simplifications keep to the limits (never
// fewer clients than the check needs, never a run shorter than the
// schedule needs), drop the boldest things first, and leave out what
// cannot shrink further.
func TestCandidates(t *testing.T) {
	ttl := 200 * time.Millisecond
	pause := schedule.Step{Fault: "node-pause", Target: schedule.TargetHolderNode, On: "before-release", At: 1.6, Delay: 0.2, For: 2.5}
	lost := schedule.Step{Fault: "lost-reply", Target: schedule.TargetHolder, On: "before-acquire", With: 1}
	sched := func(steps ...schedule.Step) schedule.Schedule {
		return schedule.Schedule{Version: schedule.Version, Name: "d-1", Steps: steps}
	}
	for _, c := range []struct {
		name string
		c    Case
		l    Limits
		want []string // the candidates' What, in order
	}{
		{"two steps, a big workload", Case{Schedule: sched(pause, lost), Clients: 8, Keys: 2, Duration: 2 * time.Second}, Limits{MinClients: 2, TTL: ttl},
			[]string{"drop step 2 (lost-reply)", "drop step 1 (node-pause)", "duration 2s → 1.26s", "clients 8 → 4", "keys 2 → 1",
				"step 1: delay 0.2×TTL → 0", "step 1: for 2.5×TTL → 1.25×TTL", "step 1: at 1.6×TTL → 0", "step 1: at 1.6×TTL → 0.8×TTL"}},
		{"at the limits", Case{Schedule: sched(schedule.Step{Fault: "lost-reply", Target: schedule.TargetHolder, On: "before-acquire"}), Clients: 2, Keys: 1,
			Duration: sched(schedule.Step{Fault: "lost-reply", Target: schedule.TargetHolder, On: "before-acquire"}).MinDuration(ttl)}, Limits{MinClients: 2, TTL: ttl},
			[]string{"drop step 1 (lost-reply)"}},
		{"one client may do", Case{Schedule: sched(schedule.Step{Fault: "client-crash", Target: schedule.TargetHolder, On: "in-cs", At: 0.05}), Clients: 3, Keys: 1, Duration: 2 * time.Second},
			Limits{MinClients: 1, TTL: ttl},
			[]string{"drop step 1 (client-crash)", "duration 2s → 1s", "clients 3 → 1", "step 1: at 0.05×TTL → 0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, cand := range Candidates(c.c, c.l) {
				got = append(got, cand.What)
				if cand.Case.Clients < c.l.MinClients || cand.Case.Duration < cand.Case.Schedule.MinDuration(c.l.TTL) {
					t.Errorf("%s: %s breaks the limits %+v", cand.What, cand.Case, c.l)
				}
				if err := cand.Case.Schedule.Check(); err != nil {
					t.Errorf("%s: %v", cand.What, err)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("candidates\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestHuntRuns: a hunt of two schedules against the built-in token-lua on
// real Redis servers (lost replies and node pauses only, 1 s runs) runs
// both, records each with its outcome and history, counts the steps drawn
// in its coverage, says why it ended, and writes hunt.json (which loads
// back), report.md and report.html. It asserts what the hunt did, not
// what the lock did (that is the hunt's finding; docs/hunt.md).
func TestHuntRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Redis servers")
	}
	leakcheck.AtEnd(t, leakcheck.Servers...)
	dir := t.TempDir()
	spec := bench.Spec{Strategy: "token-lua", Workload: workload.Config{Clients: 4, Keys: 1, TTL: 200 * time.Millisecond, Duration: time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Hunt(ctx, Options{Spec: spec, Budget: time.Minute, Seed: 3, OutDir: dir, MaxSchedules: 2, Primitives: []string{"lost-reply", "node-pause"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Schedules != 2 || len(rep.Tried) != 2 || !strings.Contains(rep.Ended, "after 2 schedules") {
		t.Fatalf("%d schedules, %d tried, ended %q: want 2 and 2, stopped after 2 schedules", rep.Schedules, len(rep.Tried), rep.Ended)
	}
	drawn := 0
	for _, c := range rep.Coverage {
		drawn += c.Drawn
		if c.Primitive != "lost-reply" && c.Primitive != "node-pause" {
			t.Errorf("coverage of %s: outside --primitives", c.Primitive)
		}
		if c.Struck > c.Drawn || c.Landed > c.Struck {
			t.Errorf("coverage %+v: struck or landed more than drawn", c)
		}
	}
	steps := 0
	for _, tr := range rep.Tried {
		steps += len(tr.Schedule.Steps)
		if tr.Outcome.Error == "" {
			if _, err := os.Stat(filepath.Join(dir, "runs", tr.Outcome.History)); err != nil {
				t.Errorf("schedule %s: its history: %v", tr.Schedule.Name, err)
			}
		}
	}
	if drawn != steps || steps == 0 {
		t.Errorf("coverage counts %d steps drawn, the schedules have %d", drawn, steps)
	}
	back, err := LoadReport(filepath.Join(dir, ReportJSON))
	if err != nil || back.Schedules != 2 {
		t.Fatalf("hunt.json: %v (%+v)", err, back)
	}
	for _, f := range []string{ReportMarkdown, ReportHTML} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%s; surprises %d, predicted %v", rep.Ended, len(rep.Surprises), rep.Predicted)
}
