package validate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// NotGated names the settings that take a run away from the strategy's
// defaults the verdict table assumes, joined by " and "; "" if none. st is
// the strategy as the run uses it (library settings applied: impl.Tune),
// scenario the scenario's name and w the run's workload with every default
// applied (its usage policy and fencing mode resolved). The reasons are:
// a usage policy other than the strategy's (--policy), a fencing mode
// other than the strategy's default (--fencing), changed library settings,
// critical sections too long for the table's rows, and one client where
// the table expects a break. The caller records the result with the run
// (history.Header.NotGated) and judges it with For.
func NotGated(st impl.Strategy, scenario string, w workload.Config) string {
	info := st.Info()
	var why []string
	if w.Policy != info.Policy {
		why = append(why, "custom usage policy (--policy)")
	}
	def := workload.FencingOff
	if info.Claims.Fencing {
		def = workload.FencingWrites
	}
	if w.Fencing != def {
		why = append(why, fmt.Sprintf("fencing %s instead of %s (--fencing)", w.Fencing, def))
	}
	if changed := libraryChanged(st); changed != "" {
		why = append(why, "library settings changed ("+changed+")")
	}
	if long := longCS(st.Name(), w); long != "" {
		why = append(why, long)
	}
	if lone := oneClient(st.Name(), scenario, w); lone != "" {
		why = append(why, lone)
	}
	return strings.Join(why, " and ")
}

// oneClient names why a run with fewer than two clients cannot show the
// breaks the verdict table expects of strategy under scenario (one client
// cannot overlap itself nor lose another's update), "" when it has two or
// more clients or the table expects no break.
func oneClient(strategy, scenario string, w workload.Config) string {
	if e, ok := Expected(strategy, scenario); w.Clients >= 2 || !ok || e.Summary() != "must-break" {
		return ""
	}
	return fmt.Sprintf("%d client (--clients %d) cannot overlap itself, so the breaks the verdict table expects for %s/%s need 2 or more clients", w.Clients, w.Clients, strategy, scenario)
}

// longCS names why a run's own critical sections break the verdict
// table's assumption for strategy, "" when they do not: the table's rows
// (e.g. "critical sections are far shorter than the TTL") assume the
// default critical section, TTL/20, and only a strategy the table expects
// to hold through the long-cs scenario (renewal, a validity check) keeps
// its verdicts with critical sections as long as the TTL. A workload
// whose largest planned wait (csLimit) reaches TTL/2, the stall the
// harness already calls overloaded, takes any other strategy outside the
// table. The long-cs scenario's own slow critical sections are a fault,
// not the workload's CS, and stay gated.
func longCS(strategy string, w workload.Config) string {
	if e, ok := Expected(strategy, "long-cs"); ok && e.Exclusion == Hold && e.Resource == Hold {
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
	return fmt.Sprintf("critical sections of up to %v %s (TTL %v; --cs, --cs-min, --cs-max, --cs-tail, --ttl), while the verdict table assumes them far shorter than the TTL (default TTL/20) for %s",
		largest, reach, w.TTL, strategy)
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
	tuned, ok := st.(impl.Tunable)
	if !ok {
		return ""
	}
	reg, err := impl.Lookup(st.Name())
	if err != nil {
		return ""
	}
	def, ok := reg.(impl.Tunable)
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
