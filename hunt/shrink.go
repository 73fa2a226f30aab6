package hunt

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/chaos/schedule"
)

// Case is a reproduction a shrinker works on: a fault schedule and the
// workload settings it may reduce.
type Case struct {
	// Schedule is the fault schedule.
	Schedule schedule.Schedule `json:"schedule"`
	// Clients and Keys are the workload's client and key counts.
	Clients int `json:"clients"`
	Keys    int `json:"keys"`
	// Duration is the workload's run time (after the readiness barrier).
	Duration time.Duration `json:"duration_ns"`
}

// String is the case in one line: its schedule and workload.
func (c Case) String() string {
	return fmt.Sprintf("%s; %d clients, %d keys, %v", c.Schedule, c.Clients, c.Keys, c.Duration)
}

// Candidate is one simplification of a case, with what it changed.
type Candidate struct {
	Case Case
	// What says what changed, e.g. "drop step 2", "clients 8 → 4".
	What string
}

// Limits bound the candidates of a case: the fewest clients the checked
// property can fail with, and the TTL (the run's duration never falls
// below what the schedule needs, schedule.Schedule.MinDuration).
type Limits struct {
	MinClients int
	TTL        time.Duration
}

// Candidates returns the simplifications of c, the boldest first, as
// Hypothesis and QuickCheck order theirs: drop a step (a step tied to it
// loses its tie and fires at the dropped step's time); halve the run
// (never below what the schedule needs); halve the clients (never below
// l.MinClients); one key; then per step: no delay, half the window, half
// the size, the earliest time (at 0: the first event after the readiness
// barrier, so the run can shrink too), or half of it.
func Candidates(c Case, l Limits) []Candidate {
	var out []Candidate
	add := func(what string, f func(*Case)) {
		n := c
		n.Schedule.Steps = slices.Clone(c.Schedule.Steps)
		f(&n)
		if n.Schedule.Check() == nil {
			out = append(out, Candidate{n, what})
		}
	}
	for k := len(c.Schedule.Steps); k >= 1; k-- {
		add(fmt.Sprintf("drop step %d (%s)", k, c.Schedule.Steps[k-1].Fault), func(n *Case) { n.Schedule.Steps = dropStep(n.Schedule.Steps, k) })
	}
	if min := c.Schedule.MinDuration(l.TTL); c.Duration > min {
		d := max(min, (c.Duration / 2).Round(time.Millisecond))
		add(fmt.Sprintf("duration %v → %v", c.Duration, d), func(n *Case) { n.Duration = d })
	}
	if lo := max(l.MinClients, 1); c.Clients > lo {
		k := max(lo, c.Clients/2)
		add(fmt.Sprintf("clients %d → %d", c.Clients, k), func(n *Case) { n.Clients = k })
	}
	if c.Keys > 1 {
		add(fmt.Sprintf("keys %d → 1", c.Keys), func(n *Case) { n.Keys = 1 })
	}
	for i, st := range c.Schedule.Steps {
		step := func(what string, f func(*schedule.Step)) {
			add(fmt.Sprintf("step %d: %s", i+1, what), func(n *Case) { f(&n.Schedule.Steps[i]) })
		}
		if st.Delay > 0 {
			step(fmt.Sprintf("delay %s → 0", ttlText(st.Delay)), func(s *schedule.Step) { s.Delay = 0 })
		}
		if st.For >= 0.1 {
			step(fmt.Sprintf("for %s → %s", ttlText(st.For), ttlText(round(st.For/2))), func(s *schedule.Step) { s.For = round(st.For / 2) })
		}
		if st.Size >= 0.1 {
			step(fmt.Sprintf("size %s → %s", ttlText(st.Size), ttlText(round(st.Size/2))), func(s *schedule.Step) { s.Size = round(st.Size / 2) })
		}
		if st.With == 0 && st.At > 0 {
			step(fmt.Sprintf("at %s → 0", ttlText(st.At)), func(s *schedule.Step) { s.At = 0 })
			if st.At >= 0.2 {
				step(fmt.Sprintf("at %s → %s", ttlText(st.At), ttlText(round(st.At/2))), func(s *schedule.Step) { s.At = round(st.At / 2) })
			}
		}
	}
	return out
}

// ttlText is "1.5×TTL".
func ttlText(x float64) string { return fmt.Sprintf("%.3g×TTL", x) }

// dropStep removes step k (1-based): a step tied to it loses the tie
// and fires at k's time (or at the time of k's own anchor), and later
// ties are renumbered.
func dropStep(steps []schedule.Step, k int) []schedule.Step {
	gone := steps[k-1]
	var out []schedule.Step
	for i, st := range steps {
		if i == k-1 {
			continue
		}
		switch {
		case st.With == k && gone.With > 0:
			st.With = gone.With
			if st.With > k {
				st.With--
			}
		case st.With == k:
			st.With, st.At = 0, gone.At
		case st.With > k:
			st.With--
		}
		out = append(out, st)
	}
	return out
}

// Shrunk is the outcome of a shrink: the smallest case found that still
// fails, and the simplifications taken, in order.
type Shrunk struct {
	Case  Case
	Taken []string
	// Tried counts the candidates tested.
	Tried int
	// Stopped says the shrink was cut short (the budget ran out) before it
	// found no smaller case that fails.
	Stopped bool
}

// Shrink shrinks start greedily, as QuickCheck does: it tests the
// candidates of the current case in order (cands), moves to the first
// that still fails (fails) and starts over from it, until no candidate
// fails or stop says to end. start must fail. fails may be noisy (a
// real run): the caller decides how many seeds make "still fails".
func Shrink(start Case, cands func(Case) []Candidate, fails func(Case) bool, stop func() bool) Shrunk {
	s := Shrunk{Case: start}
	for {
		moved := false
		for _, c := range cands(s.Case) {
			if stop() {
				s.Stopped = true
				return s
			}
			s.Tried++
			if fails(c.Case) {
				s.Case, moved = c.Case, true
				s.Taken = append(s.Taken, c.What)
				break
			}
		}
		if !moved {
			return s
		}
	}
}
