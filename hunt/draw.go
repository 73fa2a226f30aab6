package hunt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/workload"
)

// Drawer draws fault schedules from a Space with its own seeded random
// source: the same seed and space draw the same schedules, in the same
// order (a hunt's --seed). Not safe for concurrent use.
type Drawer struct {
	sp  Space
	rng *rand.Rand
	n   int
}

// NewDrawer returns a Drawer over sp seeded with seed.
func NewDrawer(sp Space, seed int64) *Drawer {
	return &Drawer{sp: sp, rng: rand.New(rand.NewPCG(uint64(seed), 0x68756e74))} // "hunt"
}

// Probabilities of a draw: a second step, a third, a step tied to the
// first one's hold (With) rather than independent.
const (
	pSecond = 0.6
	pThird  = 0.15
	pTied   = 0.5
)

// Next draws the next schedule, named prefix-N (N counts from 1). A
// schedule has one to three steps: the first on any primitive of the
// space; a second with probability pSecond and a third with pThird, each
// tied to the first step's hold with probability pTied ("a lost reply
// during a restart, a pause across a renewal") or on its own. A step's
// target, event, time, delay, window and size are drawn uniformly from
// what its primitive takes and the lock reaches; times fall in the first
// half of the run. A draw that schedule.Schedule.Check refuses is drawn
// again (the same sequence for the same seed). With an empty space every
// schedule has no step.
func (d *Drawer) Next(prefix string) schedule.Schedule {
	d.n++
	s := schedule.Schedule{Version: schedule.Version, Name: fmt.Sprintf("%s-%d", prefix, d.n)}
	if len(d.sp.Prims) == 0 {
		return s
	}
	n := 1
	if d.rng.Float64() < pSecond {
		n++
		if d.rng.Float64() < pThird {
			n++
		}
	}
	for i := range n {
		if i == 1 {
			if keep, ok := d.keep(s.Steps[0]); ok {
				s.Steps = append(s.Steps, keep)
				continue
			}
		}
		tie := i > 0 && d.rng.Float64() < pTied
		for range 20 {
			trial := s
			trial.Steps = append(slices.Clone(s.Steps), d.step(tie))
			if trial.Check() == nil {
				s = trial
				break
			}
		}
	}
	return s
}

// pKeep is the probability that a schedule whose first step strikes a
// holder from outside (its node, its links, its call, its key) keeps that
// holder in its critical section as its second step (a slow-cs tied to
// the first step's hold), as the scenarios keep the struck holder: a
// fault on a holder that leaves its critical section TTL/20 later rarely
// matters.
const pKeep = 0.35

// keep draws, with probability pKeep, the step that keeps step first's
// holder in its critical section for 0.5-2 TTLs; ok is false otherwise,
// and when first is a client fault of its own or strikes no hold's
// critical section.
func (d *Drawer) keep(first schedule.Step) (schedule.Step, bool) {
	if d.rng.Float64() >= pKeep || first.On == schedule.OnTime || first.Target == schedule.TargetNode || first.Target == schedule.TargetWaiter {
		return schedule.Step{}, false
	}
	switch first.Fault {
	case "slow-cs", "client-pause", "client-crash":
		return schedule.Step{}, false
	}
	on := string(workload.PointInCS)
	switch first.On {
	case string(workload.PointBeforeWrite):
		on = first.On
	case string(workload.PointBeforeRelease), string(workload.PointRenew), string(workload.PointBeforeExtend):
		return schedule.Step{}, false
	}
	if !slices.Contains(d.sp.Names(), "slow-cs") {
		return schedule.Step{}, false
	}
	return schedule.Step{Fault: "slow-cs", Target: schedule.TargetHolder, On: on, With: 1, For: round(between(d.rng, 0.5, 2))}, true
}

// step draws one step; tie ties it to step 1.
func (d *Drawer) step(tie bool) schedule.Step {
	r, sp := d.rng, d.sp
	p := sp.Prims[r.IntN(len(sp.Prims))]
	st := schedule.Step{Fault: p.Name, Target: p.Targets[r.IntN(len(p.Targets))]}
	if tie {
		st.With = 1
	}
	events := sp.events(p)
	if st.Target != schedule.TargetNode || tie {
		events = slices.DeleteFunc(slices.Clone(events), func(e string) bool { return e == schedule.OnTime })
	}
	if len(events) == 0 {
		events = []string{schedule.OnTime}
	}
	st.On = events[r.IntN(len(events))]
	if st.Target == schedule.TargetNode {
		st.Node = 1 + r.IntN(sp.Nodes)
	}
	if sp.Reentrant && st.On == string(workload.PointBeforeAcquire) && r.IntN(2) == 0 {
		st.Depth = 2
	}
	if !tie {
		st.At = round(between(r, 0.5, max(sp.Span/2, 1)))
	}
	if p.Delayed && r.IntN(2) == 0 {
		st.Delay = round(between(r, 0, 0.5))
	}
	if p.Window {
		// Short, about a TTL, or long: faults that matter at each scale.
		rg := [][2]float64{{0.1, 0.5}, {0.5, 1.5}, {1.5, 3}}[r.IntN(3)]
		st.For = round(between(r, rg[0], rg[1]))
	}
	if p.Sized {
		st.Size = round(between(r, 0.1, 1.5))
		switch p.Name {
		case "clock-jump", "client-clock-step":
			st.Size = round(between(r, 0.5, 3))
		case "slow-reply": // past a quorum lock's per-node timeout, about the TTL, or past it
			st.Size = round(between(r, 0.3, 2))
		}
	}
	return st
}

// between returns a float uniformly in [lo, hi).
func between(r *rand.Rand, lo, hi float64) float64 { return lo + r.Float64()*(hi-lo) }

// round keeps two decimals: schedules are read by people.
func round(x float64) float64 { return math.Round(x*100) / 100 }
