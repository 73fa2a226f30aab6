package hunt

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
)

// Outcome is what one run of a schedule showed, classified.
type Outcome struct {
	// Seed is the run's seed.
	Seed int64 `json:"seed"`
	// Surprise lists the checks that had to hold under every fault of the
	// schedule and were violated (exclusion, resource, liveness, fencing,
	// reentrancy, renewal, the contract checks: orphans, lost, extends),
	// in that order; empty: none.
	Surprise []string `json:"surprise,omitempty"`
	// Predicted lists the checks violated that the expectation left at
	// risk (the lock's rows or claims predict the break under a fault of
	// the schedule): counted by class, not reported.
	Predicted []string `json:"predicted,omitempty"`
	// Inconclusive says a gated check lacked evidence (and nothing was
	// violated that must hold).
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Error is why the run could not be judged (the harness overloaded, a
	// fault that failed to heal); "" when it was.
	Error string `json:"error,omitempty"`
	// Fired maps each step that struck (1-based) to its landing
	// ("landed", "missed", "" cannot tell).
	Fired map[int]history.Landing `json:"fired,omitempty"`
	// History is the run's history file, relative to the hunt's folder.
	History string `json:"history,omitempty"`

	run results.Run
}

// Surprised reports whether the run violated a check that had to hold.
func (o Outcome) Surprised() bool { return len(o.Surprise) > 0 }

// Fails reports whether the run violated check, and it had to hold.
func (o Outcome) Fails(check string) bool { return slices.Contains(o.Surprise, check) }

// Classify sorts a judged run's violations into surprises and predicted
// ones, from its verdicts and the expectation it was judged against
// (results.Run.ExpectedChecks): a check violated where it had to hold
// ("hold"; fencing, reentrancy and the contract checks (orphans, lost,
// extends) unless set otherwise: they are promises in every scenario;
// renewal liveness only where it is gated) is a surprise; any
// other violation is predicted. Steps that struck are read from the
// run's fault windows ("PRIMITIVE (step N)") and their landings from its
// history in dir (when it can be read).
func Classify(r results.Run, dir string) Outcome {
	o := Outcome{Seed: r.Seed, Error: r.Error, History: r.History, run: r, Fired: map[int]history.Landing{}}
	exp := r.ExpectedChecks
	v := r.Verdict
	for _, c := range []struct {
		name    string
		status  checker.Status
		promise bool // must hold unless the expectation names it
	}{
		{"exclusion", v.Exclusion, false}, {"resource", v.Resource, false}, {"liveness", v.Liveness, false},
		{"fencing", v.Fencing, true}, {"reentrancy", v.Reentrancy, true}, {"renewal", v.Renewal, false},
		{"orphans", v.Orphans, true}, {"lost", v.Lost, true}, {"extends", v.Extends, true},
	} {
		if c.status != checker.Violated {
			continue
		}
		e, set := exp[c.name]
		if e == "hold" || c.promise && !set {
			o.Surprise = append(o.Surprise, c.name)
		} else {
			o.Predicted = append(o.Predicted, c.name)
		}
	}
	o.Inconclusive = len(r.Inconclusive) > 0 && !o.Surprised()
	o.readSteps(filepath.Join(dir, r.History))
	return o
}

// stepName matches a schedule's window name, "node-pause (step 2)".
var stepName = regexp.MustCompile(`^(\S+) \(step (\d+)\)`)

// readSteps fills Fired from the history's nemesis operations.
func (o *Outcome) readSteps(path string) {
	_, ops, err := history.Load(path)
	if err != nil {
		for _, f := range o.run.Faults {
			if m := stepName.FindStringSubmatch(f.Name); m != nil {
				n, _ := strconv.Atoi(m[2])
				o.Fired[n] = ""
			}
		}
		return
	}
	for _, op := range ops {
		if op.Kind != history.Nemesis {
			continue
		}
		m := stepName.FindStringSubmatch(op.Note)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		if strings.Contains(op.Note, "never struck") {
			continue // its event never came: drawn, not struck
		}
		if prev, ok := o.Fired[n]; !ok || prev != history.Landed {
			o.Fired[n] = op.Landing
		}
		if strings.Contains(op.Note, "not injected") {
			o.Fired[n] = history.Missed
		}
	}
}
