// Package hunt is lockbench's search for the violations nobody planted:
// it draws fault schedules (schedule.Schedule) from every primitive that
// applies to a lock (draw.go), runs each against the lock (run.go: one
// bench.Run per schedule, like bench), classifies each run's violations
// into surprises and predicted ones (classify.go: a surprise is a
// violation of a check the lock's expectation source says must hold
// under every fault of the schedule), shrinks every surprise to a minimal
// schedule and workload that still fails the same check in most seeds
// (shrink.go, the way QuickCheck and Hypothesis shrink a failing input),
// and writes the hunt's report (report.go: hunt.json, report.md,
// report.html, one folder and one schedule file per surprise).
// cmd/lockbench/hunt.go parses the flags; Hunt is the entry point.
package hunt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/workload"
)

// Space is the fault space a hunt draws from for one lock: the
// primitives that apply to it (and why the others do not), the lock
// events its clients reach, its node count and how many TTLs a run spans.
type Space struct {
	// Prims are the primitives a schedule may use, in schedule.Primitives
	// order.
	Prims []schedule.Primitive
	// Left names the primitives left out, with the reason.
	Left map[string]string
	// Events are the lock events the lock's clients reach (workload.Point
	// names): a lock that renews reaches renew, one with a declared crash
	// point reaches it.
	Events []string
	// Nodes is how many nodes the lock talks to.
	Nodes int
	// Reentrant says clients nest acquires (a step may strike depth 2).
	Reentrant bool
	// Span is the run's duration in TTLs: a step's time is drawn inside
	// its first half, so the run shows what the fault did.
	Span float64
}

// SpaceOf is the fault space of a lock described by in, on a backend
// with features have, for runs of span TTLs.
func SpaceOf(in impl.Info, have []cluster.Feature, span float64) Space {
	sp := Space{Left: map[string]string{}, Nodes: max(in.Nodes, 1), Reentrant: in.Claims.Reentrant, Span: span}
	sp.Events = []string{string(workload.PointBeforeAcquire), string(workload.PointAcquired), string(workload.PointInCS),
		string(workload.PointBeforeWrite), string(workload.PointBeforeRelease)}
	if in.Claims.Renewal {
		sp.Events = append(sp.Events, string(workload.PointRenew))
	}
	if in.CrashPoint != "" {
		sp.Events = append(sp.Events, string(in.CrashPoint))
	}
	for _, p := range schedule.Primitives() {
		if ok, why := chaos.PrimitiveAppliesTo(p, in); !ok {
			sp.Left[p.Name] = why
			continue
		}
		if miss := cluster.Missing(have, p.Fault.Needs()); len(miss) > 0 {
			sp.Left[p.Name] = fmt.Sprintf("the backend lacks %v", miss)
			continue
		}
		if len(sp.events(p)) == 0 {
			sp.Left[p.Name] = fmt.Sprintf("its events (%s) never come for this lock", strings.Join(p.On, ", "))
			continue
		}
		sp.Prims = append(sp.Prims, p)
	}
	for name, why := range schedule.NotScheduled() {
		sp.Left[name] = why
	}
	return sp
}

// events returns the events of p the lock reaches (OnTime included).
func (sp Space) events(p schedule.Primitive) []string {
	var out []string
	for _, on := range p.On {
		if on == schedule.OnTime || slices.Contains(sp.Events, on) {
			out = append(out, on)
		}
	}
	return out
}

// Names returns the names of the primitives drawn from, in order.
func (sp Space) Names() []string {
	out := make([]string, len(sp.Prims))
	for i, p := range sp.Prims {
		out[i] = p.Name
	}
	return out
}

// Only narrows the space to the primitives named (nil: unchanged). A name
// that is no primitive, or one the lock's space left out, is an error
// (wrapping errs.ErrUsage) naming the choices.
func (sp Space) Only(names []string) (Space, error) {
	if len(names) == 0 {
		return sp, nil
	}
	var keep []schedule.Primitive
	for _, n := range names {
		i := slices.IndexFunc(sp.Prims, func(p schedule.Primitive) bool { return p.Name == n })
		switch {
		case i >= 0:
			keep = append(keep, sp.Prims[i])
		case sp.Left[n] != "":
			return sp, fmt.Errorf("%w: --primitives %s: left out for this lock: %s", errs.ErrUsage, n, sp.Left[n])
		default:
			return sp, fmt.Errorf("%w: --primitives %s: no such primitive (this lock's: %s)", errs.ErrUsage, n, strings.Join(sp.Names(), ", "))
		}
	}
	sp.Prims = keep
	return sp, nil
}
