package verdicts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/resource"
	"github.com/lockbench/lockbench/workload"
)

// NotGated names the settings that take a run away from the lock's
// defaults its expectations assume, joined by " and "; "" if none. st is
// the strategy as the run uses it (library settings applied: strategies.Tune),
// scenario the scenario's name and w the run's workload with every default
// applied (its usage policy and fencing mode resolved). The reasons are:
// a usage policy other than the strategy's (--policy), a fencing mode
// other than the strategy's default (--fencing), changed library settings,
// critical sections too long for its expectations, and one client where
// they expect a break. The expectations are the run's Source (SourceOf:
// the verdict rows of a built-in strategy, the claims of any other lock),
// so a lock through an adapter is gated wherever the built-in strategy
// with its claims is. The caller records the result with the run
// (history.Header.NotGated) and judges it with Source.For.
func NotGated(st impl.Strategy, scenario string, w workload.Config) string {
	info := st.Info()
	src := SourceOf(st.Name(), info)
	var why []string
	if w.Policy != info.Policy && !faultFree(scenario) {
		// In a fault-free cell the usage policy changes nothing a lock
		// promises: exclusion must hold whatever the client checks (a
		// renewal that lets the lease expire under a running holder breaks
		// it, and that is the lock's bug); long critical sections are
		// judged with the run's own policy (longCS).
		why = append(why, "custom usage policy (--policy)")
	}
	def := resource.FencingOff
	if info.Claims.Fencing {
		def = resource.FencingWrites
	}
	if w.Fencing != def {
		why = append(why, fmt.Sprintf("fencing %s instead of %s (--fencing)", w.Fencing, def))
	}
	if changed := libraryChanged(st); changed != "" {
		why = append(why, "library settings changed ("+changed+")")
	}
	if long := longCS(src, w); long != "" {
		why = append(why, long)
	}
	if lone := oneClient(src, scenario, w); lone != "" {
		why = append(why, lone)
	}
	return strings.Join(why, " and ")
}

// oneClient names why a run with fewer than two clients cannot show the
// breaks src expects of the lock under scenario (one client cannot
// overlap itself nor lose another's update), "" when it has two or more
// clients or src expects no break.
func oneClient(src Source, scenario string, w workload.Config) string {
	if e, ok := src.Expected(scenario); w.Clients >= 2 || !ok || e.Summary() != "must-break" {
		return ""
	}
	return fmt.Sprintf("%d client (--clients %d) cannot overlap itself, so the breaks %s for %s/%s need 2 or more clients", w.Clients, w.Clients,
		src.phrase("the verdict table expects", "its claims predict"), src.strategy, scenario)
}

// longCS names why a run's own critical sections break the assumption of
// src's expectations, "" when they do not: the rows and the claims rules
// (e.g. "critical sections are far shorter than the TTL") assume the
// default critical section, TTL/20, and only a lock expected to hold
// through the long-cs scenario (renewal, a validity check:
// Source.HoldsThroughLongCS) keeps its expectations with critical sections
// as long as the TTL. A workload whose largest planned wait (csLimit)
// reaches TTL/2, the stall the harness already calls overloaded, takes
// any other lock outside them. The long-cs scenario's own slow critical
// sections are a fault, not the workload's CS, and stay gated.
func longCS(src Source, w workload.Config) string {
	if src.holdsThroughLongCS(w.Policy) {
		return ""
	}
	largest := csLimit(w.CS)
	if w.TTL <= 0 || largest < w.TTL/2 {
		return ""
	}
	reach := "reach TTL/2 or more"
	if largest > w.TTL {
		reach = "exceed the TTL"
	}
	return fmt.Sprintf("critical sections of up to %v %s (TTL %v; --cs, --cs-min, --cs-max, --cs-tail, --ttl), while %s them far shorter than the TTL (default TTL/20) for %s",
		largest, reach, w.TTL, src.phrase("the verdict table assumes", "the expectations its claims predict assume"), src.strategy)
}

// faultFree reports whether scenario injects no fault (chaos.None: the
// baseline).
func faultFree(scenario string) bool {
	sc, err := chaos.Lookup(scenario)
	return err == nil && sc.Kind == chaos.None
}

// holdsThroughLongCS is HoldsThroughLongCS under usage policy p: with the
// lock's own policy its expectations say; with another, its claims under
// that policy (a lock that renews keeps its lease whatever the client
// checks; one that relies on a validity check keeps it only when the
// client checks).
func (s Source) holdsThroughLongCS(p impl.Policy) bool {
	if !s.known || p == s.info.Policy {
		return s.HoldsThroughLongCS()
	}
	in := s.info
	in.Policy = p
	e, ok := FromClaims(in, "long-cs")
	return ok && e.Exclusion == Hold && e.Resource == Hold
}

// csLimit is the largest wait a critical-section distribution plans: the
// tail when some sections take it, else Min (fixed), Max (uniform) or,
// for an exponential, Max when it caps it and 10 × the mean otherwise
// (exceeded by one section in about 22 000).
func csLimit(d workload.CSDist) time.Duration {
	var m time.Duration
	switch d.Kind {
	case workload.CSUniform:
		m = max(d.Min, d.Max)
	case workload.CSExponential:
		m = 10 * d.Min
		if d.Max > 0 {
			m = d.Max
		}
	default:
		m = d.Min
	}
	if d.TailShare > 0 {
		m = max(m, d.Tail)
	}
	return m
}

// libraryChanged names the library settings of st (a tuned library
// adapter) that differ from the registered adapter's defaults
// ("--redsync-tries 3, ..."); "" if none or st takes no settings.
func libraryChanged(st impl.Strategy) string {
	tuned, ok := st.(strategies.Tunable)
	if !ok {
		return ""
	}
	reg, err := strategies.Lookup(st.Name())
	if err != nil {
		return ""
	}
	def, ok := reg.(strategies.Tunable)
	if !ok {
		return ""
	}
	was, now := def.Settings(), tuned.Settings()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if now[k] != was[k] {
			out = append(out, "--"+k+" "+now[k])
		}
	}
	return strings.Join(out, ", ")
}
