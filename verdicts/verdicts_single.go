package verdicts

// singleNodeVerdicts are the rows of the single-node SET-based locks the
// articles lockbench grew from build up step by step: naive (SETNX, then
// EXPIRE; DEL), set-nx-px (SET NX PX; DEL) and token-lua (SET NX PX; a Lua
// compare-and-delete). None renews, checks its validity or fences, so any
// fault that outlasts the TTL breaks them.
func singleNodeVerdicts() map[string][]row {
	return map[string][]row{
		"naive": {
			{"baseline", safe("critical sections are far shorter than the TTL and nobody crashes: every strategy must be exclusive")},
			{"long-cs", broken("the key expires mid-CS; the next owner enters while the slow one still writes (and its DEL frees another's lock)")},
			{"held-key-loss", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Reason: "the key is deleted under the holder, which runs on until another client is granted it: nothing renews or checks it, and both hold the lock; whether the new owner writes before the holder (a lost update) depends on the timing"}},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake")},
			{"crash-between", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Break,
				Reason: "the client dies after SETNX and before EXPIRE: the key never expires, a deadlock"}},
			{"node-restart", broken(lostOnRestart + "; both read before either writes: a lost update")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Break, Resource: Break, Liveness: AtRisk, DuringFaults: NotGranting,
				Reason: lateUncheckedDel + "; and a SETNX queued in the pause whose call ended before it ran leaves the key without its EXPIRE, a deadlock (verdicts-sweep seed 1 at TTL 100 ms: the probe found the key at PTTL -1 and could not acquire it): liveness at risk"}},
			{"failover-lost-write", broken("SETNX and EXPIRE reached only the dead primary: " + lostAtFailover)},
			{"sentinel-failover", broken(lostAtSentinelFailover)},
			{"partition-holder", broken("the scenario keeps the holder in its critical section for 2×TTL while its links refuse connections (its calls fail at once): past the TTL it still believes it holds, the key expires, another owner enters, and the cut-off one writes on reconnect")},
			{"partition-blackhole", broken("the scenario keeps the holder in its critical section for 2×TTL while its links black-hole (its calls hang until their budget): past the TTL it still believes it holds, the key expires, another owner enters, and the partitioned one writes once the partition heals")},
			{"latency", keepsGranting("every client sees the same +100 ms round trip to the one node, so grants stay ordered: a late reply (+50 ms) shortens the lease to TTL−50 ms, still far longer than a 12.5 ms critical section")},
			{"slow-node", mayBreak("SETNX runs at once and its reply comes 1.5×TTL late; PEXPIRE, a second round trip, is answered late too, and the call may outlast its 3×TTL budget (unknown: no hold) or come back granted long after the key got its TTL: a granted holder writes over the next owner (" + slowTrusted + "): seed-dependent")},
			{"clock-jump", broken("the server's clock jumps past the TTL: the key expires at once (Redis expires by the wall clock), another owner enters while the holder still works")},
			{"random", Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk,
				Reason: "a clock jump during a critical section, or the key deleted under its holder (the mix's key loss), lets another owner in; a cut or pause between SETNX and EXPIRE can leave a key without TTL: seed-dependent"}},
			{"lost-reply", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Break,
				Reason: "SETNX ran but its reply was lost: the client sees an error and never sends PEXPIRE, so the key has no TTL and never expires, a deadlock (as crash-between, without a crash)"}},
			{"lost-reply-release", safe(releaseRan)},
			{"cancel", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Break, Reason: cancelNoTTL}},
		},
		"set-nx-px": {
			{"baseline", safe("critical sections are far shorter than the TTL: the unchecked DEL never meets another owner's key")},
			{"long-cs", broken("the key expires mid-CS; the next owner enters; the slow owner's DEL deletes the new owner's lock")},
			{"held-key-loss", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Reason: "the key is deleted under the holder, which runs on until another client is granted it: nothing renews or checks it, and both hold the lock; whether the new owner writes before the holder (a lost update) depends on the timing"}},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake")},
			{"crash-between", safe("the holder dies inside its CS; SET NX PX set the TTL atomically, so the key expires and others go on")},
			{"node-restart", broken(lostOnRestart + "; both read before either writes: a lost update")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Break, Resource: Break, Liveness: Hold, DuringFaults: NotGranting,
				Reason: lateUncheckedDel}},
			{"failover-lost-write", broken(lostAtFailover)},
			{"sentinel-failover", broken(lostAtSentinelFailover)},
			{"partition-holder", broken("the scenario keeps the holder in its critical section for 2×TTL while its links refuse connections (its calls fail at once): past the TTL it still believes it holds, the key expires, another owner enters, and the cut-off one writes on reconnect")},
			{"partition-blackhole", broken("the scenario keeps the holder in its critical section for 2×TTL while its links black-hole (its calls hang until their budget): past the TTL it still believes it holds, the key expires, another owner enters, and the partitioned one writes once the partition heals")},
			{"latency", keepsGranting("every client sees the same delay: the DEL reaches the node 112 ms after the SET, while the owner's own key (TTL 250 ms) is still there")},
			{"slow-node", broken(slowTrusted + "; its DEL then frees whoever holds the key")},
			{"clock-jump", broken("the server's clock jumps past the TTL: the key expires at once, another owner enters while the holder still works")},
			{"random", mayBreak("a clock jump during a critical section expires the key (the mix's key loss deletes it) and lets another owner in, and the holder's DEL then frees the newcomer's lock: seed-dependent")},
			{"lost-reply", safe(orphanExpires)},
			{"lost-reply-release", safe(releaseRan)},
			{"cancel", safe(cancelIgnored)},
		},
		"token-lua": {
			{"baseline", safe("no fault: SET NX PX grants one owner at a time")},
			{"long-cs", broken("the key expires mid-CS and nothing renews or checks it: the slow owner writes over the next one")},
			{"held-key-loss", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Reason: "the key is deleted under the holder, which runs on until another client is granted it: nothing renews or checks it, and both hold the lock; whether the new owner writes before the holder (a lost update) depends on the timing"}},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake")},
			{"crash-between", safe("the holder dies inside its CS; the key expires after the TTL")},
			{"node-restart", broken(lostOnRestart + "; both read before either writes: a lost update")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: pausedNode + "; the holder's late release is token-checked"}},
			{"failover-lost-write", broken(lostAtFailover)},
			{"sentinel-failover", broken(lostAtSentinelFailover)},
			{"partition-holder", broken("the scenario keeps the holder in its critical section for 2×TTL while its links refuse connections (its calls fail at once): past the TTL it still believes it holds, the key expires, another owner enters, and the cut-off one writes on reconnect")},
			{"partition-blackhole", broken("the scenario keeps the holder in its critical section for 2×TTL while its links black-hole (its calls hang until their budget): past the TTL it still believes it holds, the key expires, another owner enters, and the partitioned one writes once the partition heals")},
			{"latency", keepsGranting("every client sees the same delay: a reply 50 ms late shortens the lease to TTL−50 ms, far longer than a hold; an overlap would need one client's reply TTL−CS later than another's")},
			{"slow-node", broken(slowTrusted)},
			{"clock-jump", broken("the server's clock jumps past the TTL: the key expires at once, another owner enters while the holder, within its lease, still works (Kleppmann 2016)")},
			{"random", mayBreak("a clock jump during a critical section, an empty restart of the node (the mix's kill+restart), or the mix's key loss drops the key and lets another owner in; pauses, cuts and latency alone cannot (holds are far shorter than the TTL): seed-dependent")},
			{"lost-reply", safe(orphanExpires)},
			{"lost-reply-release", safe(releaseRan)},
			{"cancel", safe(cancelIgnored)},
		},
		// token-lua-wait runs on a primary with replicas, and only the
		// scenarios written for one (chaos.Scenario.OnReplicas).
		"token-lua-wait": {
			{"baseline", safe("no fault: SET NX PX grants one owner at a time, and the replica acknowledges each grant and release in time (WAIT 1)")},
			{"long-cs", broken("the key expires mid-CS and nothing renews or checks it: waiting for a replica does not lengthen the lease; the slow owner writes over the next one")},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires on the primary and its replica alike, another owner enters, the paused one writes on wake")},
			{"crash-between", safe("the holder dies inside its CS; the key expires after the TTL, on the primary and its replica")},
			{"failover-lost-write", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting, Reason: waitHeldBack + "; " + waitKeeps}},
			{"sentinel-failover", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting, Reason: waitHeldBack + "; " + waitKeeps + "; Sentinel promotes the only replica, ~2.3 s after the kill, inside the 4 s lease"}},
			{"failover-other-replica", broken(waitOther)},
		},
		// token-lua-cluster runs on a Redis Cluster (redis-cluster:3+3),
		// and only the scenarios written for one (chaos.Scenario.OnCluster).
		"token-lua-cluster": {
			{"baseline", safe("no fault: the cluster client sends SET NX PX and the compare-and-delete to the primary of the key's slot, which grants one owner at a time")},
			{"cluster-failover", broken(lostAtClusterFailover)},
			{"slot-migration", safe(slotMoveKeepsLock)},
			{"long-cs", broken("the key expires mid-CS on the slot's primary and nothing renews or checks it: the slow owner writes over the next one (as token-lua: the cluster changes where the key lives, not its lease)")},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires on the slot's primary, another owner enters, the paused one writes on wake (as token-lua)")},
		},
		// token-lua-wait-cluster is token-lua-wait on the same cluster:
		// SET NX PX and WAIT 1 pipelined on the slot's primary.
		"token-lua-wait-cluster": {
			{"baseline", safe("no fault: SET NX PX on the primary of the key's slot grants one owner at a time, and the slot's replica acknowledges each grant and release in time (WAIT 1)")},
			{"cluster-failover", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Break, DuringFaults: NotGranting,
				Reason: waitClusterHeldBack + "; " + waitClusterKeeps + "; " + waitClusterOrphan + " (" + waitClusterMeasured + ")"}},
			{"slot-migration", safe(slotMoveKeepsLock + "; the strategy pipelines SET and WAIT on the slot's primary itself (WAIT names no key for the cluster client to route) and follows MOVED, and ASK with ASKING, to the new owner, whose replica acknowledges")},
			{"long-cs", broken("the key expires mid-CS on the slot's primary and nothing renews or checks it: waiting for the replica does not lengthen the lease; the slow owner writes over the next one (as token-lua-wait)")},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires on the slot's primary and its replica alike, another owner enters, the paused one writes on wake (as token-lua-wait)")},
		},
		// fenced-cluster is fenced on the same cluster (its counter in the
		// key's slot by hash tag), under the same scenarios.
		"fenced-cluster": {
			{"baseline", safe("no fault: the cluster client runs the fenced acquire script on the primary of the key's slot, which grants one owner at a time")},
			{"cluster-failover", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Fencing: Break,
				Reason: lostAtClusterFailover + "; the fencing counter lives in the same slot (its hash tag) and the elected replica never saw its INCRs since it was held back either: tokens go back; the resource accepts both writes when only the struck grant's INCR was lost (the same token) and rejects the new holder's when more were (as fenced at failover-lost-write): timing"}},
			{"slot-migration", safe(slotMoveKeepsLock + "; every key of the slot moves, the fencing counter with the lock (same hash slot), so tokens keep increasing")},
			{"long-cs", fencedOnly("exclusion breaks when the key expires mid-CS, but the resource rejects the slow owner's older fencing token (as fenced)")},
			{"gc-pause", fencedOnly("exclusion breaks under the pause, but the resource rejects the woken owner's older fencing token (Kleppmann 2016; as fenced)")},
		},
		// watchdog-cluster is watchdog on the same cluster, under the
		// same scenarios.
		"watchdog-cluster": {
			{"baseline", safe("no fault: the cluster client sends SET NX PX and the compare-and-delete to the primary of the key's slot, which grants one owner at a time")},
			{"cluster-failover", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: lostAtClusterFailover + "; the holder's next renewal (every TTL/3) reaches the new primary, finds the key gone and fires Lost, which stops the stale write only when it comes before the write (as watchdog at failover-lost-write)"}},
			{"slot-migration", safe(slotMoveKeepsLock + "; renewals follow MOVED and ASK to the key's new primary")},
			{"long-cs", safe("renewal every TTL/3 on the slot's primary keeps the key alive through a 2×TTL critical section (as watchdog)")},
			{"gc-pause", broken("the pause stops the watchdog too (it runs in the holder's process; Kleppmann 2016): the key expires on the slot's primary and the paused owner writes on wake (as watchdog)")},
		},
	}
}
