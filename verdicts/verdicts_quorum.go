package verdicts

// quorumVerdicts are the rows of redlock, SET NX PX on five independent
// nodes with a quorum of three and a validity check before every write
// (redis.io distlock). One faulty node costs a holder one vote; a holder
// with a bare quorum of three loses the lock when one of its nodes forgets
// the key (restart without persistence, clock jump: Kleppmann 2016).
func quorumVerdicts() map[string][]row {
	return map[string][]row{
		"redlock": {
			{"baseline", safe("no fault: a quorum of 5 grants one owner at a time")},
			{"long-cs", safe("the client checks its validity time before writing and gives up the stale write (redis.io distlock)")},
			{"held-key-loss", mayBreak("the key is deleted on every node: the validity does not see it go, and whether it runs out before the next owner is granted (TTL/2 or more later) depends on the timing")},
			{"gc-pause", broken("the validity check passed before the pause; no timing check can cover a pause after it (Kleppmann 2016)")},
			{"crash-between", safe("the holder dies inside its CS; the keys expire after the TTL on every node")},
			{"node-restart", broken("A holds the bare quorum n1-n3; n3 restarts empty and B, cut off from n1-n2, wins n3-n5 well inside A's validity, so A's validity check passes and both write (Kleppmann 2016; the distlock page's own restart example)")},
			{"node-restart-delayed", safe("n3 stays down past the TTL, so A's keys have expired before B can win n3-n5 (redis.io distlock: delayed restarts)")},
			{"node-restart-aof", safe("n3 reloads A's key from its AOF (fsync always), so B, cut off from n1-n2, cannot win n3 (redis.io distlock: fsync=always)")},
			{"node-pause", keepsGranting(onePausedOfFive)},
			{"redlock-minority-down", keepsGranting("2 of 5 nodes down: the 3 left are a quorum, so Redlock keeps granting and stays exclusive (redis.io distlock: available while a majority is up)")},
			{"redlock-majority-down", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: "3 of 5 nodes down: no quorum, so nothing is granted while they are down (unavailability, reported in the liveness figures, not a safety violation); healed, the probe acquires again"}},
			{"failover-lost-write", safe(quorumKeepsFailedOverGrant)},
			{"failover-bare-quorum", broken(bareQuorumFailover)},
			{"partition-holder", safe("the holder's validity deadline passes while it is kept in its critical section for 2×TTL, cut off (connections refused), and its check before writing drops the stale write (redis.io distlock)")},
			{"partition-blackhole", safe("the holder's validity deadline passes while it is kept in its critical section for 2×TTL and its links black-hole, and its check before writing drops the stale write (redis.io distlock)")},
			{"latency", keepsGranting("the slow node times out (per-node timeout TTL/10 = 25 ms < 100 ms) and never counts; the other four keep granting with a quorum of three (redis.io distlock)")},
			{"slow-node", safe("n1's reply comes 1.5×TTL late, past the per-node timeout (TTL/10): the other four make the quorum and the validity, counted from the call's start, runs out before their keys expire; kept in its critical section until another client was granted, the holder finds its validity gone and does not write")},
			{"clock-jump", mayBreak(bareQuorumJump)},
			{"redlock-clock-jump", broken("A holds a bare quorum n1-n3; n3's clock jumps past the TTL and drops A's key; B (cut off from n1-n2) locks n3-n5 while A, within its validity, still writes (Kleppmann 2016)")},
			{"random", mayBreak(bareQuorumMix)},
			{"lost-reply", safe(quorumOrphans)},
			{"lost-reply-release", safe(quorumRelease)},
			{"cancel", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, Contract: AtRisk, Reason: cancelQuorum}},
		},
	}
}
