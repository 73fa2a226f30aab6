package verdicts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/impl"
)

// Expectations derived from a lock's declared claims (impl.Info: its
// Claims, its usage Policy, its Nodes and CrashPoint), for a lock that has
// no verdict rows of its own: a lock run through an adapter process
// (exec:), whose hello declares them (docs/protocol.md). Each claimRule
// below is one line of reasoning: when it applies to a lock, it sets some
// checks and adds its reason. The built-in strategies' rows are checked
// against the same rules (TestClaimsMatchRows): every row that differs
// from its claims-derived expectation is listed in ClaimsExceptions with
// why.

// claimRule sets the expectation of the scenarios it names for the locks
// it applies to. Rules apply in order; a later rule overrides the checks
// an earlier one set.
type claimRule struct {
	// scenarios the rule covers.
	scenarios []string
	// when says for which locks (nil: every lock).
	when func(impl.Info) bool
	// set changes the expectation.
	set func(*Expectation)
	// reason is the rule's one line of reasoning.
	reason string
	// ifChanged: the reason counts only when set changed the expectation.
	ifChanged bool
}

// Conditions on a lock's claims and policy.
func noRenewalNoValidityCheck(in impl.Info) bool {
	return !in.Claims.Renewal && !in.Policy.CheckValidity
}
func renews(in impl.Info) bool { return in.Claims.Renewal }
func renewsAndHonoursLost(in impl.Info) bool {
	return in.Claims.Renewal && in.Policy.HonourLost
}
func checksValidity(in impl.Info) bool   { return in.Policy.CheckValidity }
func asksLock(in impl.Info) bool         { return in.Policy.AskLock }
func reentrant(in impl.Info) bool        { return in.Claims.Reentrant }
func fences(in impl.Info) bool           { return in.Claims.Fencing }
func quorum(in impl.Info) bool           { return in.Claims.Quorum }
func singleNode(in impl.Info) bool       { return !in.Claims.Quorum }
func tokenRelease(in impl.Info) bool     { return in.Claims.TokenRelease }
func replicaAck(in impl.Info) bool       { return in.Claims.ReplicaAck }
func noTokenRelease(in impl.Info) bool   { return !in.Claims.TokenRelease }
func nonAtomicAcquire(in impl.Info) bool { return !in.Claims.AtomicAcquire }
func singleNodeRenews(in impl.Info) bool { return !in.Claims.Quorum && in.Claims.Renewal }
func singleNodeFences(in impl.Info) bool { return !in.Claims.Quorum && in.Claims.Fencing }
func splitsKeyAndTTL(in impl.Info) bool {
	return !in.Claims.AtomicAcquire && in.CrashPoint != ""
}

// Setters.
func setSafe(e *Expectation)     { e.Exclusion, e.Resource, e.Liveness = Hold, Hold, Hold }
func setBroken(e *Expectation)   { e.Exclusion, e.Resource, e.Liveness = Break, Break, Hold }
func setMayBreak(e *Expectation) { e.Exclusion, e.Resource, e.Liveness = AtRisk, AtRisk, Hold }

// fencedResource: a fencing token lets the resource refuse the late write
// of an owner whose lock was lost, so a broken exclusion leaves the
// resource safe.
func fencedResource(e *Expectation) {
	if e.Exclusion == Break {
		e.Resource = Hold
	}
}

// claimRules are the rules, by scenario. Scenarios no rule covers (none of
// lockbench's, see TestClaimsCoverScenarios) leave a lock's checks at risk.
var claimRules = []claimRule{
	{[]string{"baseline"}, nil, setSafe,
		"no fault: any lock must grant one owner at a time", false},

	{[]string{"long-cs"}, noRenewalNoValidityCheck, setBroken,
		"no renewal and no validity check: the key expires mid-CS and the next owner enters while the slow one still writes", false},
	{[]string{"long-cs"}, checksValidity, setSafe,
		"the client checks the lease's validity before its write: past the TTL it stops instead of writing", false},
	{[]string{"long-cs"}, renews, setSafe,
		"renewal keeps the lease while the client, still running, works past the TTL", false},
	{[]string{"long-cs"}, asksLock, setSafe,
		"the client asks the lock before its write (ask_lock): past the TTL a lock that asks its server finds the key gone, and one that keeps its lease's validity itself finds it run out, so it stops instead of writing", false},

	{[]string{"gc-pause"}, nil, setBroken,
		"the pause comes after the client's last check and outlasts the TTL: renewal stops with it and its validity was already checked, so it writes after another owner entered", false},

	{[]string{"crash-between"}, nil, setSafe,
		"the holder dies holding the lock: the key's TTL frees it", false},
	{[]string{"crash-between"}, splitsKeyAndTTL, func(e *Expectation) { e.Liveness = Break },
		"no atomic acquire, and the client dies at its declared crash point between setting the key and its TTL: the key never expires, a deadlock", false},

	{[]string{"node-restart"}, nil, setBroken,
		"the node restarts empty (no persistence) while the holder works: another owner is granted (quorum: the restarted node joins a second bare quorum)", false},
	{[]string{"node-restart"}, singleNodeRenews, func(e *Expectation) { e.Resource = AtRisk },
		"the holder's renewal on the emptied node fails and its Lost may stop it before its write", false},
	{[]string{"node-restart", "node-restart-delayed"}, singleNodeFences, func(e *Expectation) { e.Fencing = Break },
		"the restarted node lost its fence counter too: fencing tokens start again from 1", false},

	{[]string{"node-restart-delayed"}, nil, setSafe,
		"the node stays down past the TTL: the lock would have expired by then anyway", false},

	{[]string{"node-restart-aof"}, nil, setSafe,
		"the restarted node reloads the lock from its append-only file (fsync always)", false},

	{[]string{"node-pause"}, noTokenRelease, setBroken,
		"the paused node applies the old holder's late release, which checks no token, and frees another owner's lock", false},
	{[]string{"node-pause"}, tokenRelease, setSafe,
		"a paused node grants nothing new, and the holder's late release is token-checked", false},
	{[]string{"node-pause"}, singleNode, func(e *Expectation) { e.DuringFaults = NotGranting },
		"its one node is paused: nothing can be granted while it is", false},
	{[]string{"node-pause"}, quorum, func(e *Expectation) { e.DuringFaults = Granting },
		"one node of five paused: the other four still make a quorum and keep granting", false},
	{[]string{"node-pause"}, nonAtomicAcquire, func(e *Expectation) { e.Liveness = AtRisk },
		"no atomic acquire: an acquire whose first command (the key) is queued in the paused node and whose call ends before it runs never sends the second (its TTL), so the key may never expire (measured: naive at TTL 100 ms, verdicts-sweep seed 1, a key left at PTTL -1 that the probe could not acquire): seed-dependent", false},
	{[]string{"node-pause"}, reentrant, setMayBreak,
		"reentrant: a nested acquire inside the hold queues in the paused node and returns past the TTL, a client pause in effect: seed-dependent", false},

	{[]string{"redlock-minority-down"}, quorum, func(e *Expectation) { setSafe(e); e.DuringFaults = Granting },
		"two nodes of five down: three still make a quorum and keep granting", false},
	{[]string{"redlock-majority-down"}, quorum, func(e *Expectation) { setSafe(e); e.DuringFaults = NotGranting },
		"three nodes of five down: no quorum, nothing is granted, nothing is unsafe", false},

	{[]string{"failover-lost-write", "sentinel-failover"}, singleNode, setBroken,
		"the promoted replica never saw the grant (asynchronous replication): another owner enters while the holder works", false},
	{[]string{"failover-lost-write", "sentinel-failover"}, singleNodeRenews, func(e *Expectation) { e.Resource = AtRisk },
		"the holder's renewal on the promoted replica fails and its Lost may stop it before its write", false},
	{[]string{"failover-lost-write", "sentinel-failover"}, singleNodeFences, func(e *Expectation) { e.Fencing = Break; e.Resource = AtRisk },
		"the promoted replica never saw the fence counter's INCRs since it last synced either: tokens go back; the resource accepts both holders' writes when only the struck grant's INCR was lost (the same token) and rejects the new holder's when more were (a lower one): timing", false},
	{[]string{"failover-lost-write", "sentinel-failover"}, replicaAck, func(e *Expectation) { setSafe(e); e.DuringFaults = NotGranting },
		"a grant counts only once a replica acknowledged it (WAIT): while replication is held back nothing is granted, and the grant struck once it heals is on the replica then promoted, so the holder keeps the lock", false},
	{[]string{"cluster-failover"}, nil, setBroken,
		"the cluster elects a replica that never saw the fresh grant (replication held back, asynchronous): another client is granted the key inside the holder's lease", false},
	{[]string{"cluster-failover"}, renews, func(e *Expectation) { e.Resource = AtRisk },
		"the holder's renewal on the new primary fails and its Lost may stop it before its write", false},
	{[]string{"cluster-failover"}, fences, func(e *Expectation) { e.Fencing = Break; e.Resource = AtRisk },
		"the elected replica never saw the fence counter's INCRs since it was held back either (the counter shares the key's slot): tokens go back; the resource accepts both holders' writes when only the struck grant's INCR was lost and rejects the new holder's when more were: timing", false},
	{[]string{"cluster-failover"}, replicaAck, func(e *Expectation) { setSafe(e); e.Liveness = Break; e.DuringFaults = NotGranting },
		"a grant counts only once the slot's replica acknowledged it (WAIT): while that replica is held back nothing is granted, and the grant struck after is on the replica the cluster elects, so the holder keeps the lock; but the elected primary has no replica left (the killed one stays down), so nothing is granted on it again: liveness breaks", false},
	{[]string{"slot-migration"}, nil, setSafe,
		"MIGRATE moves the key with its TTL and clients follow MOVED and ASK to it: the lock survives the move", false},
	{[]string{"failover-other-replica"}, nil, setBroken,
		"one replica acknowledged the grant (WAIT), the other is promoted and the first re-pointed at it: the grant is gone, and another client is granted the key inside the holder's lease", false},
	{[]string{"failover-lost-write"}, quorum, setSafe,
		"one node of five fails over and loses the grant of a holder on four or more nodes: the other nodes of the quorum still hold it", false},
	{[]string{"failover-bare-quorum"}, quorum, setBroken,
		"one node of a bare quorum of three fails over and loses the grant: another client takes it and the two free nodes, a second quorum", false},

	{[]string{"partition-holder", "partition-blackhole"}, nil, setBroken,
		"kept in its critical section for 2×TTL while cut off from the lock's servers (partition-holder: connections refused, calls fail at once; partition-blackhole: calls hang until their budget), the holder still believes it holds past the TTL and writes on reconnect", false},
	{[]string{"partition-holder", "partition-blackhole"}, checksValidity, setSafe,
		"its validity runs out while it is cut off: the check before its write stops it", false},
	{[]string{"partition-holder", "partition-blackhole"}, renewsAndHonoursLost, setSafe,
		"its renewal fails while it is cut off and Lost stops it before its write", false},

	{[]string{"held-key-loss"}, nil, func(e *Expectation) { e.Exclusion, e.Resource, e.Liveness = Break, AtRisk, Hold },
		"the key is deleted under the holder, which runs on until another client is granted it: nothing renews or checks it, and both hold the lock; whether the new owner writes first (a lost update) depends on the timing", false},
	{[]string{"held-key-loss"}, checksValidity, setMayBreak,
		"its validity does not see the key go: whether it runs out before the next owner is granted (TTL/2 or more later) depends on the timing", false},
	{[]string{"held-key-loss"}, renewsAndHonoursLost, setSafe,
		"its next renewal (within TTL/3, while others are held back) finds the key gone, and Lost stops the holder before its write", false},

	{[]string{"held-key-retaken"}, nil, func(e *Expectation) { e.Exclusion, e.Resource, e.Liveness = Break, AtRisk, Hold },
		"right after a renewal the key is deleted and another client is granted it, kept in its critical section past the holder's next renewal: a renewal that extends whatever holds the key (no owner check), or whose failure nobody heeds, lets the holder write while the new owner holds the lock", false},
	{[]string{"held-key-retaken"}, renewsAndHonoursLost, setSafe,
		"its renewal compares the key's owner: the next one after another client took the key finds another owner's token, and Lost stops the holder before its write", false},

	{[]string{"rolling-restart"}, nil, func(e *Expectation) { e.Exclusion, e.Resource, e.Liveness = Break, AtRisk, Hold },
		"the nodes restart one after another, empty, until the holder's lease is left on a minority (quorum) or on none (the primary), and the holder runs on until another client is granted the key: a renewal whose failure nobody heeds lets both hold it", false},
	{[]string{"rolling-restart"}, renewsAndHonoursLost, setSafe,
		"its renewal after the last restart (the others held back) finds the key on a minority of the nodes (quorum) or gone (one primary), and Lost stops the holder before its write", false},

	{[]string{"latency"}, nil, func(e *Expectation) { setSafe(e); e.DuringFaults = Granting },
		"every client sees the same added delay (quorum: one slow node of five): grants come slower but in order", false},
	{[]string{"latency"}, reentrant, func(e *Expectation) { e.DuringFaults = "" },
		"reentrant: each nested acquire and release is another slow round trip, so the fault window may see no new grant (not judged)", false},

	{[]string{"slow-node"}, nil, setBroken,
		"one node answers the struck acquire 1.5×TTL late (its SET ran at once): a lock that trusts the late grant, kept in its critical section until another client was granted and released the key, writes over that owner", false},
	{[]string{"slow-node"}, nonAtomicAcquire, setMayBreak,
		"no atomic acquire: its second command is answered late too, and the call may outlast its budget (no hold) or come back granted: seed-dependent", false},
	{[]string{"slow-node"}, reentrant, setMayBreak,
		"reentrant: the late holder's nested acquires find the key gone or another owner's and may end the hold before its write: seed-dependent", false},
	{[]string{"slow-node"}, renewsAndHonoursLost, setMayBreak,
		"its first renewal (TTL/3 after the late grant) finds the key gone or another's and Lost stops the holder, unless the next owner is granted and done before it: seed-dependent", false},
	{[]string{"slow-node"}, checksValidity, setSafe,
		"its validity, counted from the call's start, had run out when the late reply came (one node: the acquire fails; quorum: the per-node timeout gave up on the slow node, the others made the quorum, and the check before the write stops it)", false},
	{[]string{"slow-node"}, fences, func(e *Expectation) {
		if e.Exclusion == Break {
			e.Resource = AtRisk
		}
	}, "the late grant's fencing token is older than the next owner's: the resource refuses the late write when the next owner wrote first, which the scenario waits for at most TTL/2", true},

	{[]string{"clock-jump"}, nil, setBroken,
		"the server's clock jumps past the TTL and expires the key while the holder works: another owner enters", false},
	{[]string{"clock-jump"}, renews, setMayBreak,
		"a renewal may reset the TTL before another owner is granted: seed-dependent", false},
	{[]string{"clock-jump"}, quorum, setMayBreak,
		"one node of five jumps: the others may still hold a quorum for the holder: seed-dependent", false},

	{[]string{"redlock-clock-jump"}, quorum, setBroken,
		"A holds n1-n3, n3's clock jumps and B takes n3-n5 inside A's validity: two quorums (Kleppmann 2016)", false},

	// client-clock-step: the adapter's wall clock steps back 2×TTL and the
	// holder is kept past its key's expiry, so the hold itself is long-cs's
	// (what stops a lock there stops it here); the step adds a lock that
	// keeps its own lease time on the wall clock, which only a check the
	// lock answers itself (ask_lock) consults: lockbench's validity check
	// runs on lockbench's clock from a duration, so the step cannot reach it.
	{[]string{"client-clock-step"}, nil, setBroken,
		"its adapter's wall clock steps back 2×TTL and it is kept in its critical section until another client was granted and released the key (its own key expired meanwhile): a lock that neither renews nor checks its lease writes over that owner, clock or not", false},
	{[]string{"client-clock-step"}, renews, setSafe,
		"renewal keeps the lease while the client, still running, is kept past the TTL; a renewal paced by a monotonic clock (what timers and sleeps use) does not notice the step, and one paced by the wall clock stalls, loses the key and fails the renewal-liveness check", false},
	{[]string{"client-clock-step"}, checksValidity, setSafe,
		"lockbench checks the validity on its own clock, from the duration the acquire stated (validity_ms), which the adapter's clock cannot move: past the TTL the client stops", false},
	{[]string{"client-clock-step"}, asksLock, setSafe,
		"the client asks the lock before its write: a lock that asks its server sees the key gone, and one that keeps its lease's validity itself must count it on a monotonic clock, which a wall-clock step does not move (a validity is elapsed time, and a wall clock can step: NTP, an operator, a migrated virtual machine); a lock that counts it on the wall clock says valid after the step back and writes over the next owner", false},

	{[]string{"lost-reply"}, nil, setSafe,
		"the acquire ran but its reply was lost: a correct lock reports the outcome unknown (or cleans up after a failed vote), and the key it set is an orphan that expires by its TTL", false},
	{[]string{"lost-reply"}, nonAtomicAcquire, func(e *Expectation) { e.Liveness = AtRisk },
		"no atomic acquire: if the lost reply is the first command's, the key may never get its TTL", false},
	{[]string{"lost-reply"}, splitsKeyAndTTL, func(e *Expectation) { e.Liveness = Break },
		"the key is set first and its TTL in a second command (its declared crash point lies between): the client sees the first fail and never sends the second, so the key never expires, a deadlock", false},
	{[]string{"lost-reply-release"}, nil, setSafe,
		"the release ran but its reply was lost: the client holds nothing and the key is free", false},
	{[]string{"lost-reply-extend"}, nil, setSafe,
		"the renewal ran but its reply was lost: the lease is longer than the client knows, and its next renewal goes on", false},
	{[]string{"lost-reply-reentrant"}, nil, setSafe,
		"the nested acquire ran but its reply was lost: the hold count stays one above the nesting until the key expires by its TTL (an orphan of the same owner, not a second owner)", false},

	{[]string{"cancel"}, nil, setSafe,
		"an acquire cancelled in flight while its command waits in the stopped node: a correct lock finishes the call (its real outcome), or abandons it and deletes what its command set, or reports the outcome unknown; the key it leaves is no second owner, and an acquire that says fail must leave no key (the orphan check)", false},
	{[]string{"cancel"}, nonAtomicAcquire, func(e *Expectation) { e.Liveness = AtRisk },
		"no atomic acquire: the cancel may stop the second command (the TTL) from going out after the first ran, and the key may never expire", false},
	{[]string{"cancel"}, splitsKeyAndTTL, func(e *Expectation) { e.Liveness = Break },
		"the key is set first and its TTL in a second command (its declared crash point lies between): the cancelled call never sends the second, so the key never expires, a deadlock", false},
	{[]string{"cancel"}, quorum, func(e *Expectation) { e.Contract = AtRisk },
		"quorum: the vote fails when the per-node timeout runs out in the stopped nodes, and the unlock it then sends may reach a node before the SET queued there runs: an orphan of a failed acquire on that node", false},

	{[]string{"renewal-cut"}, nil, setBroken,
		"cut off right after a renewal for 1.2×TTL, the holder's next renewals fail and the key expires during the cut; kept in its critical section until another client was granted the key, a holder that ignores its failed renewals writes over that owner", false},
	{[]string{"renewal-cut"}, renewsAndHonoursLost, setSafe,
		"its renewals fail during the cut and Lost stops the holder before its write", false},
	{[]string{"renewal-cut"}, checksValidity, setSafe,
		"its validity runs out during the cut: the check before its write stops it", false},

	// The consensus scenarios (etcd, ZooKeeper: the hello's server) apply
	// to locks on a consensus store only.
	{[]string{"leader-kill"}, nil, setMayBreak,
		"a consensus store commits a grant on a quorum before it answers, so the new leader has it; the lease or session survives the election only when the client reaches the new leader within the TTL, a timing the lock cannot guarantee (measured: etcd-mutex lost once in 20 seeds at TTL 1 s on a loaded machine; every other seed of the four built-in consensus locks held)", false},
	{[]string{"leader-kill"}, nil, func(e *Expectation) { e.Liveness = Hold },
		"the killed member restarts with its data and rejoins: the lock is granted again", false},
	{[]string{"leader-pause"}, nil, setMayBreak,
		"the leader is paused for 2×TTL while elections and reconnects take fixed times: a client whose session or keep-alive stream hangs on the paused member (etcd: no gRPC keep-alive; ZooKeeper: a handshake against a stopped server that accepted the connect) loses its lease at TTLs of seconds, and another client is granted while it still uses the lock (measured on etcd-mutex, etcd-fenced, zk-lock and zk-fenced at TTL 5 s)", false},
	{[]string{"leader-pause"}, nil, func(e *Expectation) { e.Liveness = Hold },
		"resumed, the paused member follows the new leader: the lock is granted again", false},
	{[]string{"quorum-loss"}, nil, func(e *Expectation) { setSafe(e); e.DuringFaults = NotGranting },
		"with a majority of members down no write commits: nothing is granted, nothing is unsafe", false},

	{[]string{"random"}, nil, setMayBreak,
		"a seeded mix of restarts, pauses, cuts and clock jumps: whether one lands on a hold is seed-dependent", false},
	{[]string{"random"}, nonAtomicAcquire, func(e *Expectation) { e.Liveness = AtRisk },
		"no atomic acquire: a fault between setting the key and its TTL can leave a key that never expires", false},
	{[]string{"random"}, fences, func(e *Expectation) { e.Fencing = AtRisk },
		"a restart may lose the fence counter: seed-dependent", false},

	// Last: fencing saves the resource whenever exclusion breaks because
	// an owner writes late, as long as the counter survives (not after a
	// restart or a failover, see above).
	{[]string{"long-cs", "gc-pause", "partition-holder", "partition-blackhole", "clock-jump", "node-restart", "client-clock-step"}, fences, fencedResource,
		"each grant carries a fencing token: the resource refuses the late owner's write", true},
}

// FromClaims derives the expectation of a lock under scenario from its
// declared claims, policy, nodes and crash point (in), by claimRules; the
// Reason joins the reasons of every rule that applied ("from its claims:
// ..."). ok is false when no rule covers scenario; the checks are then at
// risk.
func FromClaims(in impl.Info, scenario string) (e Expectation, ok bool) {
	e = Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk}
	var reasons []string
	for _, r := range claimRules {
		if !slices.Contains(r.scenarios, scenario) || (r.when != nil && !r.when(in)) {
			continue
		}
		before := e
		r.set(&e)
		if !r.ifChanged || e != before {
			reasons = append(reasons, r.reason)
		}
		ok = true
	}
	if !ok {
		e.Reason = fmt.Sprintf("no verdict rows for this strategy, and no claims rule covers %s: every check is reported, none is gated", scenario)
		return e, false
	}
	e.Reason = "from its claims: " + strings.Join(reasons, "; ")
	return e, true
}

// ClaimsExceptions are the built-in strategies' verdict rows that differ
// from what their claims alone predict (FromClaims), with why: behaviour
// of the implementation the claims do not capture. TestClaimsMatchRows
// lists every differing row and requires each to be here (and each entry
// here to still differ).
var ClaimsExceptions = map[[2]string]string{
	{"redsync", "node-pause"}:                 "availability not judged: redsync's whole-call timeout (0.05×TTL) needs all four live answers in time, which CPU contention can starve (seen once in a full make test)",
	{"redsync", "redlock-minority-down"}:      "availability not judged: with 3 nodes left redsync needs all 3 answers within its whole-call timeout (0.05×TTL), which CPU contention can starve",
	{"redsync-single", "failover-lost-write"}: "at risk, not must-break: redsync's call timeout (0.05×TTL) through the scenario's proxy leaves most acquires unknown, so the fault may find no grant to strike (measured: no fault landed in 1 of 2 seeds)",
	{"redsync-single", "latency"}:             "availability not judged, not grants: redsync's call timeout (0.05×TTL) is below the 100 ms round trip up to TTL 2 s, so no acquire in the window completes there, and above it from there: a library setting the claims do not carry",
}
