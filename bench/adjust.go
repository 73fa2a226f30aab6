package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Adjustment is one setting a run uses other than its Spec asked for: a
// scenario that needs a longer TTL, more run time or its own client count
// or think time (chaos.Setup), or a lock whose servers enforce a longer
// TTL (etcd's whole seconds, ConsensusMinTTL). No setting changes without
// one: the run's note lists them all and results.json records them
// (results.RunConfig.Adjusted).
type Adjustment struct {
	// Flag is the command-line flag of the setting: "--ttl", "--cs" (the
	// critical-section distribution, whichever of --cs, --cs-min, --cs-max
	// and --cs-tail set it), "--retry", "--think", "--clients",
	// "--duration".
	Flag string
	// From is the value asked for (with its default applied), To the one
	// the run uses, both as the flag would print them.
	From, To string
	// Why says what changed it, e.g. "scenario node-restart runs at TTL ≥
	// 200ms: ..." or "yours, scaled with the TTL: ×2".
	Why string
}

// String is "--flag FROM → TO (why)".
func (a Adjustment) String() string {
	return fmt.Sprintf("%s %s → %s (%s)", a.Flag, a.From, a.To, a.Why)
}

// Adjustments lists what the run of s uses other than s.Workload asks for,
// in the order Resolved applies them (see Adjustment); nil when nothing
// changes. The error is Resolved's.
func (s Spec) Adjustments() ([]Adjustment, error) {
	r, err := s.resolve()
	return r.adjusted, err
}

// resolution is what Spec.resolve returns: Resolved's values and the
// adjustments made on the way.
type resolution struct {
	st       impl.Strategy
	sc       chaos.Scenario
	setup    chaos.Setup
	w        workload.Config
	adjusted []Adjustment
}

// runTTL is the TTL a run asked for ttl uses and why, "" when it is ttl:
// at least the scenario's Setup.TTL, the TTL the lock's server enforces
// (strategies.ServerTTLer) and, for locks not on Redis, ConsensusMinTTL.
func runTTL(st impl.Strategy, scenario string, setup chaos.Setup, ttl time.Duration) (time.Duration, string) {
	var why []string
	if setup.TTL > 0 && ttl < setup.TTL {
		ttl = setup.TTL
		why = append(why, fmt.Sprintf("scenario %s runs at TTL ≥ %v: %s; a longer --ttl is kept", scenario, setup.TTL, setup.TTLWhy))
	}
	if stt, ok := st.(strategies.ServerTTLer); ok && ttl > 0 {
		// The server enforces another TTL (etcd: whole seconds): the run,
		// its critical sections, retries and faults follow that one, so a
		// pause of 2×TTL outlasts the lease the server keeps.
		if s := stt.ServerTTL(ttl); s != ttl {
			ttl = s
			why = append(why, fmt.Sprintf("%s's server enforces TTL %v (%s leases count whole seconds)", st.Name(), s, st.Info().Server))
		}
	}
	if in := st.Info(); in.Server != impl.ServerRedis && ttl < ConsensusMinTTL {
		ttl = ConsensusMinTTL
		why = append(why, fmt.Sprintf("locks on %s run at TTL ≥ %v, op timeout 3×TTL by default", in.Server, ConsensusMinTTL))
	}
	return ttl, strings.Join(why, "; ")
}

// scaleBy returns d×k, rounded to the microsecond.
func scaleBy(d time.Duration, k float64) time.Duration {
	return time.Duration(float64(d) * k).Round(time.Microsecond)
}

// retime returns w moved from its TTL to ttl: the settings given
// explicitly (a critical-section distribution, a retry policy, a think
// time, a safety margin) are scaled by ttl/w.TTL, so that they keep their
// share of the TTL; the zero ones keep following the TTL through
// workload's defaults. Each change is appended to adj, the TTL's with
// why; defaults are compared at both TTLs (WithDefaults), so the default
// critical section and retry policy are listed too.
func retime(w workload.Config, ttl time.Duration, why string, adj []Adjustment) (workload.Config, []Adjustment) {
	if ttl == w.TTL || w.TTL <= 0 {
		return w, adj
	}
	k := float64(ttl) / float64(w.TTL)
	scaled := fmt.Sprintf("yours, scaled with the TTL: ×%.3g", k)
	adj = append(adj, Adjustment{Flag: "--ttl", From: w.TTL.String(), To: ttl.String(), Why: why})
	asked := w
	if w.CS != (workload.CSDist{}) {
		w.CS.Min, w.CS.Max, w.CS.Tail = scaleBy(w.CS.Min, k), scaleBy(w.CS.Max, k), scaleBy(w.CS.Tail, k)
	}
	if w.Retry.Kind == workload.RetryFixed || w.Retry.Kind == workload.RetryExponential {
		w.Retry.Base, w.Retry.Max = scaleBy(w.Retry.Base, k), scaleBy(w.Retry.Max, k)
	}
	if w.Think > 0 {
		w.Think = scaleBy(w.Think, k)
		adj = append(adj, Adjustment{Flag: "--think", From: asked.Think.String(), To: w.Think.String(), Why: scaled})
	}
	w.SafetyMargin = scaleBy(w.SafetyMargin, k)
	w.TTL = ttl
	// Compare with the defaults applied at either TTL, so that the default
	// critical section and retry policy, which follow the TTL, are listed
	// too; a config WithDefaults refuses compares as given (Resolved
	// reports its error).
	was, now := asked, w
	if d, err := asked.WithDefaults(); err == nil {
		was = d
	}
	if d, err := w.WithDefaults(); err == nil {
		now = d
	}
	if was.CS != now.CS {
		adj = append(adj, Adjustment{Flag: "--cs", From: was.CS.String(), To: now.CS.String(),
			Why: given(asked.CS != (workload.CSDist{}), scaled, "the default, TTL/20")})
	}
	if was.Retry != now.Retry {
		adj = append(adj, Adjustment{Flag: "--retry", From: was.Retry.String(), To: now.Retry.String(),
			Why: given(asked.Retry.Kind != "", scaled, "the default, exponential:TTL/50:TTL/5")})
	}
	return w, adj
}

// given is yes when the setting was given, else no.
func given(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// minDuration is the shortest run of scenario sc for st at TTL ttl and
// why: the scenario's Setup.MinDuration, scaled by ttl/Setup.TTL when the
// run's TTL is longer than the one the scenario needs (its faults' timing
// follows the TTL), and for locks not on Redis ConsensusMinDuration.
func minDuration(st impl.Strategy, sc chaos.Scenario, setup chaos.Setup, ttl time.Duration) (time.Duration, string) {
	d, why := time.Duration(0), ""
	if setup.MinDuration > 0 {
		d = setup.MinDuration
		if setup.TTL > 0 && ttl > setup.TTL {
			d = scaleBy(d, float64(ttl)/float64(setup.TTL))
			why = fmt.Sprintf("scenario %s runs at least %v at TTL %v (%v at TTL %v: its faults' timing follows the TTL)", sc.Name, d, ttl, setup.MinDuration, setup.TTL)
		} else {
			why = fmt.Sprintf("scenario %s runs at least %v for its faults", sc.Name, d)
		}
	}
	if in := st.Info(); in.Server != impl.ServerRedis && ConsensusMinDuration > d {
		d, why = ConsensusMinDuration, fmt.Sprintf("locks on %s run at least %v", in.Server, ConsensusMinDuration)
	}
	return d, why
}
