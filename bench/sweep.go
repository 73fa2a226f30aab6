package bench

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
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
// the table of docs/verdicts.md (sweeptable.Table).
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

// ScalesOf returns the scales a profile with Scales runs strategy st at.
func (p Profile) ScalesOf(st impl.Strategy) []Scale {
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
					scale := p.ScalesOf(st)[i]
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
	ss := p.ScalesOf(st)
	if i >= len(ss) {
		return 0
	}
	return max(ss[i].Seeds, 1)
}
