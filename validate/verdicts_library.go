package validate

// libraryVerdicts are the rows of the library adapters, which run the same
// workloads so users can compare the home-made strategies with the
// libraries they would adopt: redsync (go-redsync/redsync, Redlock on five
// nodes: as redlock), redsync-single (redsync on one node: as token-lua plus
// a validity check) and redislock (bsm/redislock with its refresh loop: as
// watchdog). Their call timeouts derive from the TTL (redsync: 0.05×TTL),
// which several rows name.
func libraryVerdicts() map[string][]row {
	return map[string][]row{
		"redsync": {
			{"baseline", safe("no fault: a quorum of 5 grants one owner at a time")},
			{"long-cs", safe("the client checks mutex.Until() before writing and gives up the stale write")},
			{"gc-pause", broken("the validity check passed before the pause; no timing check can cover a pause after it (Kleppmann 2016)")},
			{"crash-between", safe("the holder dies inside its CS; the keys expire after the TTL on every node")},
			{"node-restart", broken("A holds the bare quorum n1-n3; n3 restarts empty and B, cut off from n1-n2, wins n3-n5 well inside A's validity (mutex.Until), so both write (Kleppmann 2016)")},
			{"node-restart-delayed", safe("n3 stays down past the TTL, so A's keys have expired before B can win n3-n5 (redis.io distlock: delayed restarts)")},
			{"node-restart-aof", safe("n3 reloads A's key from its AOF (fsync always), so B, cut off from n1-n2, cannot win n3")},
			{"node-pause", safe(onePausedOfFive + "; whether redsync keeps granting is reported, not gated: it needs the 4 live answers within its whole-call timeout (0.05×TTL, 2.5 ms at a 50 ms TTL), which CPU contention can starve (seen once in a full make test)")},
			{"redlock-minority-down", safe("2 of 5 nodes down: the 3 left are a quorum and redsync stays exclusive; whether it keeps granting is reported, not gated: it then needs all 3 answers within its whole-call timeout (0.05×TTL, 2.5 ms at a 50 ms TTL), which CPU contention can starve")},
			{"redlock-majority-down", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: "3 of 5 nodes down: no quorum, so nothing is granted while they are down (reported in the liveness figures); healed, the probe acquires again"}},
			{"failover-lost-write", safe(quorumKeepsFailedOverGrant)},
			{"partition-holder", safe("the holder's validity (mutex.Until) passes while it is cut off, and its check before writing drops the stale write")},
			{"latency", keepsGranting("the slow node times out (redsync's 0.05·TTL call timeout) and never counts; the other four keep granting with a quorum of three")},
			{"clock-jump", mayBreak(bareQuorumJump)},
			{"redlock-clock-jump", broken("A holds a bare quorum n1-n3; n3's clock jumps past the TTL and drops A's key; B locks n3-n5 while A, within mutex.Until, still writes (Kleppmann 2016)")},
			{"random", mayBreak(bareQuorumMix)},
		},
		"redsync-single": {
			{"baseline", safe("no fault: SET NX PX grants one owner at a time")},
			{"long-cs", safe("the client checks mutex.Until() before writing and gives up the stale write, as redlock does")},
			{"gc-pause", broken("the validity check passed before the pause; no timing check can cover a pause after it (Kleppmann 2016)")},
			{"crash-between", safe("the holder dies inside its CS; the key expires after the TTL")},
			{"node-restart", broken(lostOnRestart + "; the holder's validity (mutex.Until) still runs, so its check passes and both write")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: pausedNode + "; the late release is token-checked"}},
			{"failover-lost-write", mayBreak("the grant is lost with the primary as for token-lua, but redsync's call timeout (0.05×TTL: 5 ms at 100 ms) through the scenario's proxy leaves most acquires unknown, so the fault may find no grant to strike (measured at TTL 100 ms: no fault landed in 1 of 2 seeds, no violation in the other)")},
			{"sentinel-failover", broken(lostAtSentinelFailover + "; the holder's validity (mutex.Until, 4 s) still runs")},
			{"partition-holder", safe("the holder's validity (mutex.Until) passes while it is cut off, and its check before writing drops the stale write")},
			{"latency", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: "redsync's call timeout (0.05×TTL = 12.5 ms) is below the 100 ms round trip, so every acquire during the window times out (info): safe but unavailable, unlike token-lua"}},
			{"clock-jump", broken("the server's clock jumps past the TTL: the key expires at once, another owner enters while the holder, within mutex.Until (the client's clock did not jump), still works (Kleppmann 2016)")},
			{"random", mayBreak("a clock jump during a critical section expires the key and lets another owner in while mutex.Until still runs: seed-dependent")},
		},
		"redislock": {
			{"baseline", safe("no fault: SET NX PX grants one owner at a time")},
			{"long-cs", safe("the refresh loop (Lock.Refresh every TTL/3, as the library's README refreshes before the TTL runs out) keeps the key alive through a 2×TTL critical section, as watchdog; with --redislock-refresh off it breaks as token-lua")},
			{"gc-pause", broken("the pause stops the refresh loop too (Kleppmann 2016): the key expires and the paused owner writes on wake")},
			{"crash-between", safe("the holder dies inside its CS with its refresh loop; the key expires after the TTL")},
			{"node-restart", mayBreak(lostOnRestart + "; but a refresh (every TTL/3) that reaches the restarted node before the other client's grant finds the key gone and fires Lost, which ends the hold in time (measured, seeds 1-6 at 16 clients: exclusion broken in 5 of 10 runs, a lost update in 1; --redislock-refresh off breaks as token-lua)")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: pausedNode + "; refreshes to the paused node time out, Lost fires once the TTL has passed, and the late release is token-checked"}},
			{"failover-lost-write", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "bsm/redislock is SET NX PX on one primary, so the grant is lost with it and a second client enters while the first still uses the lock; its next refresh (TTL/3 after the grant) would fire Lost and stop the stale write, but the failover and the next grant usually beat it (as watchdog; the struck holder reads after the second client has read, so exclusion breaks whenever the fault lands: measured in seeds 1, 2, 4, 5, 6, lost updates in 4 of them)"}},
			{"sentinel-failover", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost at the Sentinel failover and a second client enters while the first still uses the lock; a refresh that reaches the new primary fires Lost and stops the stale write only if it comes before the write (as watchdog)"}},
			{"partition-holder", safe("refreshes fail while cut off; Lost fires once TTL has passed since the last refresh, and the holder honours it before writing (as watchdog); with --redislock-refresh off it breaks as token-lua")},
			{"latency", keepsGranting("every client sees the same delay and holds end long before the TTL; refreshes time out (round trip > TTL/3) but Lost only fires after the TTL, past the hold (as watchdog)")},
			{"clock-jump", mayBreak("the jump expires the key at once; Lost fires only at the next refresh (every TTL/3), so the holder writes unless a refresh fell between the jump and its write (as watchdog)")},
			{"random", mayBreak("a clock jump between two refreshes expires the key before Lost can fire: seed-dependent")},
		},
	}
}
