// Package schedule holds fault schedules as data: a Schedule is steps,
// each a fault primitive (Primitives) put on a target at a lock event,
// read from and written to JSON files (Decode, Read, Encode) and checked
// (Check). The hunt draws them; chaos.ScheduleScenario plays one against
// a run, reusing the nemeses of the scenarios that exercise each
// primitive (ScenariosFor names them).
package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/workload"
)

// Version is the version of the schedule file format (Schedule's
// "schedule" field). A reader refuses any other.
const Version = 1

// Prefix starts the scenario name of a run of a fault schedule
// ("schedule:NAME"), in results and history headers.
const Prefix = "schedule:"

// Schedule is a fault schedule as data: the steps a generic nemesis
// (ScheduleScenario) plays against one run, each a fault primitive put on
// a target when a lock event comes. The hunt (lockbench hunt) draws
// schedules, shrinks the ones that surprise, and writes them as files
// that `lockbench run --schedule FILE` replays (Encode, Decode).
// Scenarios are hand-written recipes; a schedule is the same idea made
// data, after etcd's robustness tests (a fault is a small value listed
// once, scenarios are data) and Jepsen's nemesis generators.
//
// Every time is in TTLs of the run (a float: 0.5 is half the TTL), so a
// schedule means the same at every TTL, as the scenarios' timings do.
type Schedule struct {
	// Version is Version.
	Version int `json:"schedule"`
	// Name names the schedule in the run's scenario ("schedule:NAME"),
	// its history file and reports: letters, digits, '-' and '_'.
	Name string `json:"name"`
	// From says where the schedule came from, for humans (e.g. "lockbench
	// hunt --seed 7, schedule 12, shrunk"); not interpreted.
	From string `json:"from,omitempty"`
	// Steps are the faults, in the order they are matched against each
	// lock event. Empty: a run without faults (the baseline's nemesis).
	Steps []Step `json:"steps"`
}

// Step is one fault of a schedule: primitive Fault put on Target when the
// lock event On comes (the first one after At, or the one of step With's
// hold), Delay later, for For.
type Step struct {
	// Fault is the primitive's name (Primitives: "node-pause",
	// "lost-reply", ...).
	Fault string `json:"fault"`
	// Target says where the fault acts (Target*): the client at the event
	// ("holder"; "waiter": a client other than step With's, at its event on
	// that hold's key), the node holding its lock ("holder-node"), its
	// links ("holder-links"), or node Node ("node").
	Target string `json:"target"`
	// On is the lock event that triggers the step: a workload.Point
	// ("acquired", "in-cs", "before-acquire", "renew", ...) or OnTime (no
	// event: the step fires at At by the schedule's clock).
	On string `json:"on"`
	// Depth narrows before-acquire and before-release to nested calls (2:
	// the second level of a reentrant hold; 0: the outermost call).
	Depth int `json:"depth,omitempty"`
	// With, when positive, ties the step to step With (1-based, an earlier
	// step): it strikes that step's client and hold (or, with target
	// "waiter", another client on its key) once it has fired; At is then
	// not used.
	With int `json:"with,omitempty"`
	// At is when the step may fire, in TTLs after the schedule started
	// (the readiness barrier: every client made its first call).
	At float64 `json:"at"`
	// Delay is the time from the event to the injection, in TTLs.
	Delay float64 `json:"delay,omitempty"`
	// For is how long the fault stays in force, in TTLs (a window
	// primitive: a pause, a cut, latency); 0 for instant ones.
	For float64 `json:"for,omitempty"`
	// Size is the magnitude of a sized primitive, in TTLs: the latency
	// added each way, a clock jump's step.
	Size float64 `json:"size,omitempty"`
	// Node is target "node"'s node, 1-based (n1, n2, ...).
	Node int `json:"node,omitempty"`
}

// Targets of a step.
const (
	// TargetHolder is the client at the triggering event (its goroutine,
	// its process, or the lock call it is about to make).
	TargetHolder = "holder"
	// TargetWaiter is a client other than step With's (or than the
	// key's holder when With is 0), at its event on the same key: a
	// client waiting for the lock.
	TargetWaiter = "waiter"
	// TargetHolderNode is the node the struck lock lives on: the only
	// node of a single-node lock, one of the nodes holding the client's
	// token for a quorum lock (the lowest), the leader of an etcd cluster
	// or ZooKeeper ensemble.
	TargetHolderNode = "holder-node"
	// TargetHolderLinks are the struck client's links to every node.
	TargetHolderLinks = "holder-links"
	// TargetNode is node Step.Node (every client's links to it, for a
	// link fault).
	TargetNode = "node"
)

// OnTime is Step.On for a step that waits for no lock event: it fires at
// At by the schedule's clock.
const OnTime = "time"

// String is the step in one line, e.g. "node-pause on holder-node at
// acquired after 1.5×TTL, +0.1×TTL, for 2×TTL".
func (s Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s", s.Fault, s.Target)
	if s.Target == TargetNode {
		fmt.Fprintf(&b, " n%d", s.Node)
	}
	on := s.On
	if s.Depth >= 2 {
		on += fmt.Sprintf(" (depth %d)", s.Depth)
	}
	if s.On == OnTime {
		fmt.Fprintf(&b, " at %s×TTL", ttls(s.At))
	} else if s.With > 0 {
		fmt.Fprintf(&b, " at %s of step %d's hold", on, s.With)
	} else {
		fmt.Fprintf(&b, " at %s after %s×TTL", on, ttls(s.At))
	}
	if s.Delay > 0 {
		fmt.Fprintf(&b, ", +%s×TTL", ttls(s.Delay))
	}
	if s.For > 0 {
		fmt.Fprintf(&b, ", for %s×TTL", ttls(s.For))
	}
	if s.Size > 0 {
		fmt.Fprintf(&b, ", size %s×TTL", ttls(s.Size))
	}
	return b.String()
}

// ttls formats a TTL multiple with up to 3 significant digits.
func ttls(x float64) string { return fmt.Sprintf("%.3g", x) }

// String is the schedule in one line: its steps joined by "; ", or "no
// fault".
func (s Schedule) String() string {
	if len(s.Steps) == 0 {
		return "no fault"
	}
	out := make([]string, len(s.Steps))
	for i, st := range s.Steps {
		out[i] = st.String()
	}
	return strings.Join(out, "; ")
}

// Faults returns the primitive names of the steps, each once, in step order.
func (s Schedule) Faults() []string {
	var out []string
	for _, st := range s.Steps {
		if !slices.Contains(out, st.Fault) {
			out = append(out, st.Fault)
		}
	}
	return out
}

// Scenario is the scenario name of a run of s: Prefix + Name.
func (s Schedule) Scenario() string { return Prefix + s.Name }

// IsSchedule reports whether a scenario name is that of a fault schedule
// (Prefix).
func IsSchedule(scenario string) bool { return strings.HasPrefix(scenario, Prefix) }

// End returns when the schedule's last fault ends at the latest, in TTLs
// after the schedule started: a step tied to another (With) counts from
// that step's end, a window from its injection. The trigger of a lock
// event may come later than At; End counts At.
func (s Schedule) End() float64 {
	ends := make([]float64, len(s.Steps))
	var last float64
	for i, st := range s.Steps {
		from := st.At
		if st.With > 0 && st.With <= i {
			from = ends[st.With-1]
		}
		ends[i] = from + st.Delay + st.For
		last = max(last, ends[i])
	}
	return last
}

// MinDuration is the shortest run that lets every step fire and heal at
// TTL ttl, with two TTLs after the last one for the run to show what it
// did: (End + 2) × ttl, and no less than 4 TTLs.
func (s Schedule) MinDuration(ttl time.Duration) time.Duration {
	return time.Duration(max(s.End()+2, 4) * float64(ttl)).Round(time.Millisecond)
}

// Encode writes s as indented JSON, one field per line.
func (s Schedule) Encode(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteFile writes s to path (Encode).
func (s Schedule) WriteFile(path string) error {
	var b bytes.Buffer
	if err := s.Encode(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// Decode reads a schedule (Encode's JSON) and checks it
// (Schedule.Check): unknown fields, another version or an invalid step are
// an error naming the problem and the fix.
func Decode(r io.Reader) (Schedule, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var s Schedule
	if err := dec.Decode(&s); err != nil {
		return Schedule{}, fmt.Errorf("not a schedule file: %w (see docs/hunt.md for the format)", err)
	}
	if dec.More() {
		return Schedule{}, errors.New("not a schedule file: more than one JSON value")
	}
	return s, s.Check()
}

// Read reads a schedule file (Decode); errors wrap
// errs.ErrUsage and name the file.
func Read(path string) (Schedule, error) {
	f, err := os.Open(path)
	if err != nil {
		return Schedule{}, fmt.Errorf("%w: --schedule %s: %v", errs.ErrUsage, path, err)
	}
	defer f.Close()
	s, err := Decode(f)
	if err != nil {
		return Schedule{}, fmt.Errorf("%w: --schedule %s: %v", errs.ErrUsage, path, err)
	}
	return s, nil
}

// maxSteps bounds a schedule's steps: a longer one is a mistake, not a
// schedule anyone can read.
const maxSteps = 16

// Check reports the first problem of s as an error naming the step and
// the fix: the version, the name, unknown primitives, targets and events
// a primitive does not take, a With that does not point back, negative or
// missing times and sizes.
func (s Schedule) Check() error {
	if s.Version != Version {
		return fmt.Errorf(`"schedule": %d: this lockbench reads version %d`, s.Version, Version)
	}
	if s.Name == "" || strings.IndexFunc(s.Name, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) >= 0 {
		return fmt.Errorf(`"name": %q: want letters, digits, '-' and '_' (it names the run's files)`, s.Name)
	}
	if len(s.Steps) > maxSteps {
		return fmt.Errorf("%d steps: a schedule has at most %d", len(s.Steps), maxSteps)
	}
	for i, st := range s.Steps {
		if err := st.check(i); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, st.Fault, err)
		}
	}
	return nil
}

// check reports the first problem of step i (0-based).
func (st Step) check(i int) error {
	p, ok := LookupPrimitive(st.Fault)
	if !ok {
		return fmt.Errorf("unknown fault primitive %q (schedules take: %s)", st.Fault, strings.Join(PrimitiveNames(), ", "))
	}
	if !slices.Contains(p.Targets, st.Target) {
		return fmt.Errorf("target %q: %s takes %s", st.Target, p.Name, strings.Join(p.Targets, ", "))
	}
	if !slices.Contains(p.On, st.On) {
		return fmt.Errorf("on %q: %s is triggered at %s", st.On, p.Name, strings.Join(p.On, ", "))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"at", st.At}, {"delay", st.Delay}, {"for", st.For}, {"size", st.Size}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v > maxTTLs {
			return fmt.Errorf("%q: %v: want a number of TTLs from 0 to %d", f.name, f.v, maxTTLs)
		}
	}
	switch {
	case st.With < 0 || st.With > i:
		return fmt.Errorf(`"with": %d: want 0 or an earlier step (1..%d)`, st.With, i)
	case st.With > 0 && st.On == OnTime:
		return fmt.Errorf(`"with": %d: a step on %q waits for no lock event, so it cannot strike another step's hold`, st.With, OnTime)
	case st.Target == TargetWaiter && st.On == OnTime:
		return fmt.Errorf(`target %q needs a lock event ("on"), not %q`, TargetWaiter, OnTime)
	case st.Target == TargetNode && st.Node < 1:
		return fmt.Errorf(`target %q needs "node": 1 or more (n1, n2, ...)`, TargetNode)
	case st.Target != TargetNode && st.Node != 0:
		return fmt.Errorf(`"node": %d is for target %q only`, st.Node, TargetNode)
	case st.Depth < 0 || st.Depth == 1 || st.Depth > 8:
		return fmt.Errorf(`"depth": %d: want 0 (the outermost call) or 2..8 (a nested one)`, st.Depth)
	case st.Depth >= 2 && st.On != string(workload.PointBeforeAcquire) && st.On != string(workload.PointBeforeRelease):
		return fmt.Errorf(`"depth": %d is for before-acquire and before-release only`, st.Depth)
	case p.Window && st.For <= 0:
		return fmt.Errorf(`"for": %s stays in force for a time: want "for" > 0 (TTLs)`, p.Name)
	case !p.Window && st.For > 0:
		return fmt.Errorf(`"for": %s is instant: leave "for" out`, p.Name)
	case p.Sized && st.Size <= 0:
		return fmt.Errorf(`"size": %s needs a magnitude: want "size" > 0 (TTLs)`, p.Name)
	case !p.Sized && st.Size > 0:
		return fmt.Errorf(`"size": %s takes none: leave "size" out`, p.Name)
	case !p.Delayed && st.Delay > 0:
		return fmt.Errorf(`"delay": %s acts on the client's own goroutine at its event: leave "delay" out`, p.Name)
	case st.On == OnTime && st.Target != TargetNode:
		return fmt.Errorf(`target %q needs a lock event to find its client; a step on %q takes target %q`, st.Target, OnTime, TargetNode)
	}
	if p.checkStep != nil {
		return p.checkStep(st)
	}
	return nil
}

// maxTTLs bounds every time of a step: a schedule of more than 1000 TTLs
// is a typing error.
const maxTTLs = 1000
