package bench

// failoverVerdicts covers the replica promotion and Sentinel failover scenarios: scenario → strategy → expectation.
//
// Both scenarios lose a fresh lock on purpose: Redis replication is
// asynchronous, so a primary acknowledges SET NX before its replica has it,
// and a replica promoted after the primary died never saw the grant
// (redis.io distlock: "a race condition with this model"; Kleppmann 2016).
// The struck client is held at its grant until another client is granted
// the key, and stays inside its lease, so the loss deterministically
// becomes two holders. Quorum locks put each node on its own: one node of
// five failing over loses one vote of a holder that keeps a majority.
func failoverVerdicts() map[string]map[string]Expectation {
	lost := "replication is asynchronous: the promoted replica never saw the grant, so the key is free on the new primary and a second client is granted it inside the first one's lease (redis.io distlock, Kleppmann 2016)"
	lostSentinel := "Sentinel promotes a replica that never saw the fresh grant (asynchronous replication): once clients follow, a second client is granted the key inside the first one's 4 s lease (redis.io distlock, Kleppmann 2016)"
	return map[string]map[string]Expectation{
		"failover-lost-write": {
			"naive":     broken("SETNX and EXPIRE reached only the dead primary: " + lost),
			"set-nx-px": broken(lost),
			"token-lua": broken(lost),
			"watchdog": {Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost with the primary and another client enters; the watchdog's next renewal (every TTL/3) finds the key gone and fires Lost, stopping the stale write only if it comes before the holder's write"},
			"reentrant": broken("the hash lock's HINCRBY and PEXPIRE reached only the dead primary: " + lost),
			"fenced": {Exclusion: Break, Resource: Break, Liveness: Hold, Fencing: Break,
				Reason: "the fencing counter's INCR is lost with the grant, so the new holder gets the same fencing token and the resource accepts both writes: fencing tokens need a source that survives failover (Kleppmann 2016)"},
			"redislock": broken("bsm/redislock is SET NX PX on one primary: " + lost),
			"redlock":   safe("one node of five fails over and loses the grant; the holder keeps a majority (it held at least 4), so no other client reaches a quorum (redis.io distlock)"),
			"redsync":   safe("one node of five fails over and loses the grant; the holder keeps a majority (it held at least 4), so no other client reaches a quorum (redis.io distlock)"),
		},
		"sentinel-failover": {
			"naive":     broken(lostSentinel),
			"set-nx-px": broken(lostSentinel),
			"token-lua": broken(lostSentinel),
			"watchdog": {Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost at the Sentinel failover and another client enters; a renewal that reaches the new primary fires Lost, stopping the stale write only if it comes before the holder's write"},
			"reentrant": broken(lostSentinel),
			"fenced": {Exclusion: Break, Resource: Break, Liveness: Hold, Fencing: Break,
				Reason: "the promoted replica never saw the fencing counter's INCR either: the new holder gets the same fencing token and the resource accepts both writes (Kleppmann 2016: fencing tokens need a consensus-backed source)"},
			"redislock": broken(lostSentinel),
		},
	}
}

// failoverNamed lists the "strategy/scenario" pairs of this family that the
// issues name: TestVerdictMatrix runs them with 20 seeds (others with 2).
// The sentinel-failover pairs take ~7 s per run (Sentinel start and a 2.2 s
// failover), so none is named here; run them with LOCKBENCH_SEEDS=20.
func failoverNamed() []string {
	return []string{"token-lua/failover-lost-write", "redlock/failover-lost-write"}
}
