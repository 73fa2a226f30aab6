package schedule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/workload"
)

// Primitive says how a fault schedule (Schedule) may use one fault
// primitive (Faults): the targets it strikes, the lock events that may
// trigger it, whether it lasts (Window) or has a magnitude (Sized), and
// the scenarios that exercise it alone. The scenarios are where a
// schedule's expectations come from (validate's weakest expectation over
// them): a primitive with none leaves every check at risk. Primitives
// lists each schedulable primitive once.
type Primitive struct {
	// Name is the fault's name (Fault.Name), e.g. "node-pause".
	Name string
	// Fault is the primitive's zero value (its Needs: backend features).
	Fault fault.Fault
	// Summary says in one line what a step of it does.
	Summary string
	// Targets are the targets a step may give it (Target*).
	Targets []string
	// On are the lock events that may trigger it (workload.Point names, or
	// OnTime).
	On []string
	// Window: the fault stays in force for Step.For; else it is instant.
	Window bool
	// Sized: the fault has a magnitude, Step.Size.
	Sized bool
	// Delayed: the fault may be put in force Step.Delay after its event
	// (in the background); a fault that acts on the client's own
	// goroutine at the event (a pause, a crash) takes no delay.
	Delayed bool
	// Links: the fault acts on per-link proxies (a run of a schedule with
	// it routes every link through one: Setup.Proxies).
	Links bool
	// scenarios returns the scenarios that exercise the primitive alone as
	// step st uses it, in chaos.All's names.
	scenarios func(st Step) []string
	// checkStep, when set, refuses steps the primitive cannot play
	// beyond Step.check's generic rules.
	checkStep func(st Step) error
}

// Lock events a step may be triggered at.
var (
	onHold = []string{string(workload.PointAcquired), string(workload.PointInCS), string(workload.PointBeforeWrite),
		string(workload.PointBeforeRelease), string(workload.PointRenew), string(workload.PointBeforeExtend), string(workload.PointBeforeAcquire)}
	onServer = append(slices.Clone(onHold), OnTime)
	onClient = []string{string(workload.PointBeforeAcquire), string(workload.PointAcquired), string(workload.PointInCS),
		string(workload.PointBeforeWrite), string(workload.PointBeforeRelease), string(workload.PointRenew)}
	onCall = []string{string(workload.PointBeforeAcquire), string(workload.PointBeforeRelease), string(workload.PointRenew), string(workload.PointBeforeExtend)}
)

// names returns a func giving the same scenarios for every step.
func names(sc ...string) func(Step) []string { return func(Step) []string { return sc } }

// Primitives returns every fault primitive a schedule may use, once, in
// the order of Faults. The primitives Faults lists that schedules leave
// out are NotScheduled, with the reason.
func Primitives() []Primitive {
	return []Primitive{
		{Name: "node-kill", Fault: &fault.NodeKill{}, Window: true, Delayed: true, Targets: []string{TargetHolderNode, TargetNode}, On: onServer,
			Summary:   "SIGKILL a node, keep it down for the window, restart it (Redis: empty; etcd/ZooKeeper: with its data)",
			scenarios: names("node-restart-delayed", "redlock-minority-down", "leader-kill")},
		{Name: "node-restart", Fault: &fault.NodeRestart{}, Delayed: true, Targets: []string{TargetHolderNode, TargetNode}, On: onServer,
			Summary:   "SIGKILL a node and restart it at once (Redis: empty; etcd/ZooKeeper: with its data)",
			scenarios: names("node-restart", "leader-kill")},
		{Name: "node-pause", Fault: &fault.NodePause{}, Window: true, Delayed: true, Targets: []string{TargetHolderNode, TargetNode}, On: onServer,
			Summary:   "SIGSTOP a node for the window, then SIGCONT (commands sent meanwhile run after it)",
			scenarios: names("node-pause", "leader-pause")},
		{Name: "client-pause", Fault: &fault.ClientPause{}, Window: true, Targets: []string{TargetHolder, TargetWaiter}, On: onClient,
			Summary:   "stop the client (every goroutine at its next lock event, its renewal too; an adapter process with SIGSTOP) for the window",
			scenarios: names("gc-pause")},
		{Name: "slow-cs", Fault: &fault.SlowCS{}, Window: true, Targets: []string{TargetHolder},
			On:        []string{string(workload.PointAcquired), string(workload.PointInCS), string(workload.PointBeforeWrite)},
			Summary:   "the client's goroutine waits the window at its event (a long critical section; its renewal goes on)",
			scenarios: slowCSScenarios},
		{Name: "client-crash", Fault: &fault.ClientCrash{}, Targets: []string{TargetHolder},
			On: []string{string(workload.PointBeforeAcquire), string(workload.PointAcquired), string(workload.PointInCS),
				string(workload.PointBeforeWrite), string(workload.PointBeforeRelease), string(workload.PointAfterSetNX)},
			Summary:   "the client dies at its event (it makes no further call; an adapter process is killed)",
			scenarios: names("crash-between")},
		{Name: "cancel", Fault: &fault.CancelCall{}, Targets: []string{TargetHolder}, On: []string{string(workload.PointBeforeAcquire)},
			Summary:   "the client's outermost acquire of a free key is cancelled in flight while its command waits in the lock's SIGSTOPped nodes, which resume so the command still runs (as in the cancel scenario; Redis locks)",
			scenarios: names("cancel"),
			checkStep: func(st Step) error {
				if st.Depth >= 2 {
					return fmt.Errorf(`"depth": cancel strikes outermost acquires only`)
				}
				return nil
			}},
		{Name: "link-cut", Fault: &link.Cut{}, Window: true, Delayed: true, Links: true, Targets: []string{TargetHolderLinks}, On: onHold,
			Summary:   "the client's links to every node refuse connects and drop open connections for the window",
			scenarios: names("partition-holder")},
		{Name: "link-blackhole", Fault: &link.Blackhole{}, Window: true, Delayed: true, Links: true, Targets: []string{TargetHolderLinks}, On: onHold,
			Summary:   "the client's links to every node accept connects and drop every byte for the window (calls hang until their budget)",
			scenarios: names("partition-blackhole")},
		{Name: "link-latency", Fault: &link.Latency{}, Window: true, Sized: true, Delayed: true, Links: true,
			Targets: []string{TargetHolderLinks, TargetNode}, On: onServer,
			Summary:   "add Size each way on the client's links (holder-links) or on every link to a node (node) for the window",
			scenarios: names("latency"),
			checkStep: func(st Step) error {
				if st.Target == TargetNode && st.On != OnTime {
					return fmt.Errorf(`target %q: latency on a node's links is timed: want "on": %q`, TargetNode, OnTime)
				}
				return nil
			}},
		{Name: "lost-reply", Fault: &link.LostReply{}, Links: true, Targets: []string{TargetHolder}, On: onCall,
			Summary:   "the client's lock call reaches the server and runs; its reply is dropped and the connection closed (every node of a quorum)",
			scenarios: lostReplyScenarios,
			checkStep: func(st Step) error {
				if st.Depth >= 2 && st.On != string(workload.PointBeforeAcquire) {
					return fmt.Errorf(`"depth": a lost reply strikes nested acquires only (before-acquire)`)
				}
				return nil
			}},
		{Name: "slow-reply", Fault: &link.SlowReply{}, Sized: true, Links: true, Targets: []string{TargetHolder},
			On:        []string{string(workload.PointBeforeAcquire), string(workload.PointRenew), string(workload.PointBeforeExtend)},
			Summary:   "n1 (one node of a quorum) answers the client's call Size late: the command runs at once, its reply waits (an acquire as in slow-node: of a free key, the holder kept until another was granted; a renewal or extend: the delay lasts Size)",
			scenarios: slowReplyScenarios,
			checkStep: func(st Step) error {
				if st.Depth >= 2 {
					return fmt.Errorf(`"depth": a slow reply strikes outermost acquires only`)
				}
				return nil
			}},
		{Name: "key-loss", Fault: &fault.KeyLoss{}, Delayed: true, Targets: []string{TargetHolder},
			On:        []string{string(workload.PointAcquired), string(workload.PointInCS), string(workload.PointBeforeWrite), string(workload.PointRenew)},
			Summary:   "the client's key is deleted on every node (an eviction, an operator's DEL); other clients' acquires of it wait TTL/2, as in held-key-loss, so the holder's renewal finds it missing first",
			scenarios: names("held-key-loss")},
		{Name: "client-clock-step", Fault: &fault.ClientClockStep{}, Sized: true, Targets: []string{TargetHolder},
			On:        []string{string(workload.PointAcquired), string(workload.PointInCS), string(workload.PointBeforeWrite), string(workload.PointRenew)},
			Summary:   "the wall clock of the holder's adapter process steps back by Size (an LD_PRELOAD clock offset; its monotonic clock stays) for the rest of the run; adapters whose programs read their clock through libc only",
			scenarios: names("client-clock-step")},
		{Name: "clock-jump", Fault: &fault.ClockJump{}, Sized: true, Delayed: true, Targets: []string{TargetHolderNode, TargetNode}, On: onServer,
			Summary:   "the node's wall clock jumps forward by Size (Redis expires keys by it)",
			scenarios: names("clock-jump")},
	}
}

// slowCSScenarios maps a slow-cs step to the scenarios whose expectation
// it shares. At in-cs (after the read, before the usage policy's check)
// it is long-cs exactly: the check sees the wait. At acquired the wait
// comes before the read, which no check guards, and at before-write after
// the check: both are the pause between a check and a use that gc-pause
// makes (its renewal going on, unlike gc-pause's), so the weaker of the
// two holds. Hunts found both: redlock broke exclusion in 5 of 5 seeds
// under slow-cs at before-write (a stale write) and at acquired (a read
// after the validity ran out, no update lost) where long-cs alone said it
// must hold.
func slowCSScenarios(st Step) []string {
	if st.On == string(workload.PointInCS) {
		return []string{"long-cs"}
	}
	return []string{"long-cs", "gc-pause"}
}

// lostReplyScenarios maps a lost-reply step to the scenario that drops
// the reply of the same call: an outermost acquire, a nested one, a
// release or a renewal.
func lostReplyScenarios(st Step) []string {
	switch {
	case st.On == string(workload.PointBeforeAcquire) && st.Depth >= 2:
		return []string{"lost-reply-reentrant"}
	case st.On == string(workload.PointBeforeAcquire):
		return []string{"lost-reply"}
	case st.On == string(workload.PointBeforeRelease):
		return []string{"lost-reply-release"}
	}
	return []string{"lost-reply-extend"}
}

// slowReplyScenarios maps a slow-reply step to the scenarios whose
// expectation it shares: slow-node at an acquire; at a renewal or an
// extend, slow-node's (a node answering late) and lost-reply-extend's (an
// extend that ran while the client has no answer: a reply later than
// the call's budget is a lost one), the weaker of the two.
func slowReplyScenarios(st Step) []string {
	if st.On == string(workload.PointBeforeAcquire) {
		return []string{"slow-node"}
	}
	return []string{"slow-node", "lost-reply-extend"}
}

// NotScheduled names the primitives of Faults that schedules leave out,
// with the reason.
func NotScheduled() map[string]string {
	replicated := "needs a replicated topology (a primary and its replicas, or Sentinel); a schedule runs on the strategy's own topology"
	return map[string]string{
		"link-move":         replicated,
		"replication-cut":   replicated,
		"replica-promotion": replicated,
		"sentinel-failover": replicated,
		"replica-hold":      "needs a Redis Cluster; played by its scenario (cluster-failover) only",
		"cluster-election":  "needs a Redis Cluster; played by its scenario (cluster-failover) only",
		"slot-move":         "needs a Redis Cluster; played by its scenario (slot-migration) only",
		"rolling-restart":   "a schedule composes it: node-restart steps on different nodes (target node), each at the holder's renewal (on renew)",
	}
}

// LookupPrimitive returns the schedulable primitive named name.
func LookupPrimitive(name string) (Primitive, bool) {
	for _, p := range Primitives() {
		if p.Name == name {
			return p, true
		}
	}
	return Primitive{}, false
}

// PrimitiveNames returns the names of Primitives, in order.
func PrimitiveNames() []string {
	var out []string
	for _, p := range Primitives() {
		out = append(out, p.Name)
	}
	return out
}

// ScenariosFor returns the scenarios that exercise step st's primitive
// alone as st uses it, whether they apply to a strategy or not (see
// ScenariosOf).
func ScenariosFor(st Step) []string {
	p, ok := LookupPrimitive(st.Fault)
	if !ok || p.scenarios == nil {
		return nil
	}
	return p.scenarios(st)
}

// Steps returns one step per event the primitive takes (with a nested
// variant of before-acquire), for listing its scenarios.
func (p Primitive) Steps() []Step {
	var out []Step
	for _, on := range p.On {
		out = append(out, Step{Fault: p.Name, On: on})
		if on == string(workload.PointBeforeAcquire) {
			out = append(out, Step{Fault: p.Name, On: on, Depth: 2})
		}
	}
	return out
}

// Describe is the primitive in one line for listings: its name, what it
// does, its targets and events.
func (p Primitive) Describe() string {
	return fmt.Sprintf("%s: %s (targets: %s; on: %s)", p.Name, p.Summary, strings.Join(p.Targets, ", "), strings.Join(p.On, ", "))
}

// Exercised reports whether some scenario exercises the primitive alone
// (ScenariosFor names them for a step).
func (p Primitive) Exercised() bool { return p.scenarios != nil }
