package bench

// failoverVerdicts covers the replica promotion and Sentinel failover scenarios: scenario → strategy → expectation.
//
// Both scenarios lose a fresh lock on purpose: Redis replication is
// asynchronous, so a primary acknowledges a grant before its replica has
// it, and a replica promoted after the primary died never saw it (redis.io
// distlock: "a race condition with this model"; Kleppmann 2016). The struck
// client stays inside its lease until the next holder has read the
// protected resource, and the next holder's write waits for the struck
// client's read (chaos.FailoverLostWrite), so the loss becomes two holders
// and a lost update in every run. Quorum locks keep each node on its own:
// one node of five failing over costs a holder that keeps a majority one
// vote.
func failoverVerdicts() map[string]map[string]Expectation {
	lost := "replication is asynchronous: the promoted replica never saw the grant, so a second client is granted the key inside the first one's lease and both write (redis.io distlock, Kleppmann 2016)"
	lostSentinel := "Sentinel promotes a replica that never saw the fresh grant (asynchronous replication): once clients follow, a second client is granted the key inside the first one's 4 s lease and both write (redis.io distlock, Kleppmann 2016)"
	quorumHolds := "n1 of five fails over and loses the grant; the holder keeps a majority (it held at least 4 nodes), so no other client reaches a quorum (redis.io distlock)"
	return map[string]map[string]Expectation{
		"failover-lost-write": {
			"naive":     broken("SETNX and EXPIRE reached only the dead primary: " + lost),
			"set-nx-px": broken(lost),
			"token-lua": broken(lost),
			"watchdog": {Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost with the primary and a second client enters while the first still uses the lock; the first renewal (TTL/3 after the grant) would fire Lost and stop the stale write, but the failover and the next grant usually beat it"},
			"reentrant": broken("the hash lock's HINCRBY and PEXPIRE reached only the dead primary: " + lost),
			"fenced": {Exclusion: Break, Resource: Break, Liveness: Hold, Fencing: Break,
				Reason: "the fencing counter's INCR is lost with the grant, so the next holder gets the same fencing token and the resource accepts both writes: fencing tokens need a store that survives failover (Kleppmann 2016)"},
			"redislock": {Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "bsm/redislock is SET NX PX on one primary, so the grant is lost with it and a second client enters while the first still uses the lock; its next refresh (TTL/3 after the grant) would fire Lost and stop the stale write, but the failover and the next grant usually beat it (as watchdog; the struck holder reads after the second client has read, so exclusion breaks whenever the fault lands: measured in seeds 1, 2, 4, 5, 6, lost updates in 4 of them)"},
			"redlock": safe(quorumHolds),
			"redsync": safe(quorumHolds),

			"redsync-single": {Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost with the primary as for token-lua, but redsync's call timeout (0.05×TTL: 5 ms at 100 ms) through the scenario's proxy leaves most acquires unknown, so the fault may find no grant to strike (measured at TTL 100 ms: no fault landed in 1 of 2 seeds, no violation in the other)"},
		},
		"sentinel-failover": {
			"naive":     broken(lostSentinel),
			"set-nx-px": broken(lostSentinel),
			"token-lua": broken(lostSentinel),
			"watchdog": {Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost at the Sentinel failover and a second client enters while the first still uses the lock; a renewal that reaches the new primary fires Lost and stops the stale write only if it comes before the write"},
			"reentrant": broken(lostSentinel),
			"fenced": {Exclusion: Break, Resource: Break, Liveness: Hold, Fencing: Break,
				Reason: "the promoted replica never saw the fencing counter's INCR either: the next holder gets the same fencing token and the resource accepts both writes (Kleppmann 2016: fencing tokens need a consensus-backed store)"},
			"redislock": {Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost at the Sentinel failover and a second client enters while the first still uses the lock; a refresh that reaches the new primary fires Lost and stops the stale write only if it comes before the write (as watchdog)"},

			"redsync-single": broken(lostSentinel + "; the holder's validity (mutex.Until, 4 s) still runs"),
		},
	}
}

// failoverNamed lists the "strategy/scenario" pairs of this family that the
// issues name: TestVerdictMatrix runs them with 20 seeds (others with 2).
// A sentinel-failover run takes ~6 s (Sentinel start, a 2.2 s failover, a
// 4 s TTL), so none is named here; run them with LOCKBENCH_SEEDS=20.
func failoverNamed() []string {
	return []string{"token-lua/failover-lost-write", "redlock/failover-lost-write"}
}
